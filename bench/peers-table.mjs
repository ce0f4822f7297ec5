// peers-table.mjs — the figures of one run-peers.sh run, and genroc's ratio to
// each peer on the same workload (> 1: genroc is better), for its SQL API
// driven from Node and for the `genroc worker` binary.
import fs from 'node:fs';

const rows = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const fig = (r) => {
  if (r.workload === 'w3') return r.latency_ms?.p50 ?? null;
  if (r.workload === 'w2') return r.process?.steps_per_sec ?? null;
  return r.process?.per_sec ?? null;
};
const unit = { w1: 'jobs/s', w2: 'steps/s', w3: 'p50 ms (lower is better)' };
// genroc's best figure per workload: over the SQL driver's variants (genroc)
// and, apart, the binary's (genroc-bin)
const bestOf = (peer) => {
  const best = {};
  for (const r of rows) {
    if (r.peer !== peer) continue;
    const v = fig(r);
    if (v == null) continue;
    const b = best[r.workload];
    if (!b || (r.workload === 'w3' ? v < b : v > b)) best[r.workload] = v;
  }
  return best;
};
const best = bestOf('genroc');
const bestBin = bestOf('genroc-bin');
const ratioTo = (g, r, v) => (v != null && g != null && !r.peer.startsWith('genroc')
  ? (r.workload === 'w3' ? v / g : g / v).toFixed(2) + '×' : '');
console.log('| workload | run | figure | p99 ms | pg cpu % | client cpu % | genroc SQL best / this | genroc binary / this |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const v = fig(r);
  const cpu = r.process?.cpu ?? r.cpu ?? {};
  console.log(`| ${r.workload} (${unit[r.workload]}) | ${r.tag} | ${v ?? 'n/a'} | ${r.workload === 'w3' ? r.latency_ms?.p99 : ''} | ${cpu.pg_cpu_pct ?? ''} | ${cpu.node_cpu_pct ?? ''} | ${ratioTo(best[r.workload], r, v)} | ${ratioTo(bestBin[r.workload], r, v)} |`);
}
