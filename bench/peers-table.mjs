// peers-table.mjs — the figures of one run-peers.sh run, and genroc's ratio to
// each peer on the same workload (> 1: genroc is better).
import fs from 'node:fs';

const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const fig = (r) => {
  if (r.workload === 'w3') return r.latency_ms?.p50 ?? null;
  if (r.workload === 'w2') return r.process?.steps_per_sec ?? null;
  return r.process?.per_sec ?? null;
};
const unit = { w1: 'jobs/s', w2: 'steps/s', w3: 'p50 ms (lower is better)' };
const best = {};
for (const r of rows) {
  if (r.peer !== 'genroc') continue;
  const v = fig(r);
  if (v == null) continue;
  const b = best[r.workload];
  if (!b || (r.workload === 'w3' ? v < b : v > b)) best[r.workload] = v;
}
console.log('| workload | run | figure | p99 ms | pg cpu % | client cpu % | genroc best / this |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const v = fig(r);
  const g = best[r.workload];
  let ratio = '';
  if (v != null && g != null && r.peer !== 'genroc') ratio = (r.workload === 'w3' ? v / g : g / v).toFixed(2) + '×';
  const cpu = r.process?.cpu ?? r.cpu ?? {};
  console.log(`| ${r.workload} (${unit[r.workload]}) | ${r.tag} | ${v ?? 'n/a'} | ${r.workload === 'w3' ? r.latency_ms?.p99 : ''} | ${cpu.pg_cpu_pct ?? ''} | ${cpu.node_cpu_pct ?? ''} | ${ratio} |`);
}
