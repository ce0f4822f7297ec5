// genroc-bin driver for the peers' benchmark harness (../shared/bench-peers):
// the tasks run in the `genroc worker` binary itself, as most users run them,
// on the built-in genroc:noop handler (the peers' table's row for the binary).
//
// The harness counts progress through its handler hooks, which run in this
// Node process; the binary's handlers do not.  So the driver spawns the worker
// and reads the progress from the database every POLL_MS: ended instances
// since the last look become onStep/onDone calls.  The first onStart is
// called when the worker is spawned, so the measured window includes the
// binary's start (connect, register): that only understates genroc.  Each
// look is one count over the partial indexes of the rows not ended.
// Workloads: w1 and w2 (w3's enqueue-to-handler latency needs a hook inside
// the handler; not measured here).  Variants: default = --concurrency conc
// (16); tuned = the same and --prefetch 100 (claims of up to 100 held in the
// worker, as graphile-worker's tuned localQueue); both --durability
// essential (GENROC_DURABILITY to change it).
import { spawn } from 'node:child_process';
import pg from 'pg';
import { withClient } from '../lib/common.mjs';
import { definitions, startBatch } from './genroc.mjs';

const { one: ONE, three: THREE } = definitions('genroc:noop');
const POLL_MS = 50;
const NOT_ENDED = `SELECT ((SELECT count(*) FROM genroc._instances WHERE status = 'ready')
  + (SELECT count(*) FROM genroc._instances WHERE status = 'running')
  + (SELECT count(*) FROM genroc._instances WHERE status IN ('queued', 'waiting')))::int AS n`;

export default async function make({ url, db, variant, conc }) {
  const prefetch = variant === 'tuned' ? 100 : 0;
  const bin = process.env.GENROC_BIN;
  if (!bin) throw new Error('genroc-bin: set GENROC_BIN to the genroc binary');
  const durability = process.env.GENROC_DURABILITY || 'essential';
  let pool, proc = null, timer = null, total = 0, seen = 0, wf = 0;

  const d = {
    name: 'genroc-bin',
    version: process.env.GENROC_VERSION || '0.1',
    config: { concurrency: conc, prefetch, durability, handler: 'genroc:noop (built in)', progress_poll_ms: POLL_MS },
    batchNote: 'one SQL statement per 1000: genroc.start_many(definition, inputs)',
    singleNote: 'n/a',
    chain: false,
    pollMs: null,
    w2Note: 'one instance of a 3-Task definition run by `genroc worker`; the step reports hand the next step back',

    async setup() {
      await withClient(db, async (c) => {
        await c.query('CREATE EXTENSION IF NOT EXISTS genroc');
        await c.query('SELECT genroc.define($1, $2::jsonb)', ['bench1', JSON.stringify(ONE)]);
        await c.query('SELECT genroc.define($1, $2::jsonb)', ['bench3', JSON.stringify(THREE)]);
      });
      pool = new pg.Pool({ connectionString: url, max: 2 });
    },
    async enqueueBatch(items) {
      const def = items[0].wf !== undefined ? 'bench3' : 'bench1';
      total += items.length;
      await startBatch(pool, def, items);
    },
    async enqueueOne() { throw new Error('genroc-bin: w3 is not measured through the binary'); },
    async startWorker(h) {
      const steps = (await pool.query('SELECT 1 FROM genroc._instances i JOIN genroc._definitions d ON d.id = i.definition_id WHERE d.name = $1 LIMIT 1', ['bench3'])).rowCount ? 3 : 1;
      proc = spawn(bin, ['worker', '--database', url, '--concurrency', String(conc),
        '--prefetch', String(prefetch), '--durability', durability, '--worker-id', `bench-bin-${process.pid}`,
        '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
      h.onStart({ i: 0 });
      const look = async () => {
        const left = (await pool.query(NOT_ENDED)).rows[0].n;
        const ended = total - left;
        for (; seen < ended; seen++) {
          if (steps === 3) {
            for (let k = 0; k < 3; k++) h.onStep(wf, k + 1);
            h.onDone({ wf: wf++ });
          } else {
            h.onDone({ i: seen });
          }
        }
      };
      const tick = async () => {
        try { await look(); } catch (e) { console.error('[genroc-bin] look', e.message); }
        if (proc) timer = setTimeout(tick, POLL_MS);
      };
      timer = setTimeout(tick, POLL_MS);
    },
    async stopWorker() {
      if (timer) { clearTimeout(timer); timer = null; }
      if (proc) {
        const p = proc;
        proc = null;
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        await exited;
      }
    },
    async remaining() {
      return withClient(db, async (c) => (await c.query(NOT_ENDED)).rows[0].n);
    },
    async close() {
      await d.stopWorker();
      if (pool) await pool.end().catch(() => {});
    },
  };
  return d;
}
