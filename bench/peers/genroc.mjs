// genroc driver for the peers' benchmark harness (../shared/bench-peers),
// in the same shape as its drivers: it drives genroc's SQL API from Node with
// `pg`, the way an application in any language would.
//
// Worker loop (all variants): one claimer connection calls genroc.claim()
// for up to the free slots (at most `batch`) and hands each task to the
// handler; each completion is its own genroc.complete() call on a pool of
// conc + 2 connections, a workflow step's genroc.complete_and_claim(), which
// hands the workflow's next step back to the same slot.  It sleeps on LISTEN genroc (the engine notifies when
// a task becomes ready) with a 1 s poll as the backstop.
// Variants: default = batch 16; tuned = batch 100 (like the peers' tuned
// local queues).
import pg from 'pg';
import { withClient } from '../lib/common.mjs';

// The two benchmark definitions (W1: one task; W2: three), their tasks on
// `resource` (genroc-bin.mjs runs them on the built-in genroc:noop).
export function definitions(resource) {
  return {
    one: { StartAt: 'T', States: { T: { Type: 'Task', Resource: resource, End: true } } },
    three: {
      StartAt: 'S1',
      States: {
        S1: { Type: 'Task', Resource: resource, Next: 'S2' },
        S2: { Type: 'Task', Resource: resource, Next: 'S3' },
        S3: { Type: 'Task', Resource: resource, End: true },
      },
    },
  };
}
const { one: ONE, three: THREE } = definitions('handler:bench');
const STEP = { S1: 1, S2: 2, S3: 3 };

// A batch of starts: genroc.start_many (one statement, the instances and
// their log written set-wise); an extension without it (an older version
// under GENROC_VERSION) gets genroc.start per row over jsonb_array_elements.
let startManyMissing = false;
export async function startBatch(pool, def, items) {
  if (!startManyMissing) {
    try {
      await pool.query('SELECT count(*) FROM genroc.start_many($1, $2::jsonb)', [def, JSON.stringify(items)]);
      return;
    } catch (e) {
      if (e.code !== '42883') throw e;
      startManyMissing = true;
    }
  }
  await pool.query(`SELECT s.instance_id FROM jsonb_array_elements($2::jsonb) AS p(v),
    LATERAL genroc.start($1, p.v) AS s`, [def, JSON.stringify(items)]);
}

export default async function make({ url, db, variant, conc }) {
  const batch = variant === 'tuned' ? 100 : conc;
  let pool, listener, stopping = false, loop = null, wake = null;
  const worker = `bench-${process.pid}`;

  const d = {
    name: 'genroc',
    version: process.env.GENROC_VERSION || '0.1',
    config: { concurrency: conc, claim_batch: batch, pool_max: conc + 2, durability: process.env.GENROC_DURABILITY || 'default' },
    batchNote: 'one SQL statement per 1000: genroc.start_many(definition, inputs), one commit per chunk',
    singleNote: 'SELECT genroc.start(definition, input)',
    chain: false,
    pollMs: null, // LISTEN genroc wakes the worker
    w2Note: 'one instance of a 3-Task definition; each step is claim + complete (durable state transitions)',

    async setup() {
      await withClient(db, async (c) => {
        await c.query('CREATE EXTENSION IF NOT EXISTS genroc');
        await c.query('SELECT genroc.define($1, $2::jsonb)', ['bench1', JSON.stringify(ONE)]);
        await c.query('SELECT genroc.define($1, $2::jsonb)', ['bench3', JSON.stringify(THREE)]);
      });
      pool = new pg.Pool({ connectionString: url, max: conc + 2 });
      await pool.query(`SELECT genroc.worker_register($1, '{"lease_duration":"120s","host":"bench"}')`, [worker]);
    },
    async enqueueBatch(items) {
      const def = items[0].wf !== undefined ? 'bench3' : 'bench1';
      await startBatch(pool, def, items);
    },
    async enqueueOne(it) { await pool.query('SELECT genroc.start($1, $2::jsonb)', ['bench1', JSON.stringify(it)]); },
    async startWorker(h) {
      stopping = false;
      listener = new pg.Client({ connectionString: url });
      await listener.connect();
      listener.on('notification', () => { if (wake) { const w = wake; wake = null; w(); } });
      await listener.query('LISTEN genroc');
      let inflight = 0;
      let slotFree = null;
      const run = async (first) => {
        const it = first.input;
        if (it.wf !== undefined) {
          // a step's report hands back the workflow's next step to this
          // worker (complete_and_claim): no claim round trip between steps
          for (let t = first; t;) {
            const k = STEP[t.state];
            if (k === 1) h.onStart(it);
            h.onStep(it.wf, k);
            let next = null;
            if (stopping) {
              await pool.query('SELECT genroc.complete($1, $2, $3::jsonb)', [t.instance_id, t.epoch, JSON.stringify(it)]);
            } else {
              const { rows } = await pool.query(
                'SELECT status, instance_id, epoch, state FROM genroc.complete_and_claim($1, $2, $3::jsonb, $4, ARRAY[\'default\'])',
                [t.instance_id, t.epoch, JSON.stringify(it), worker]);
              if (rows[0] && rows[0].status === 'running' && rows[0].instance_id !== null) next = rows[0];
            }
            if (k === 3) h.onDone({ wf: it.wf });
            t = next;
          }
        } else {
          const t = first;
          h.onStart(it);
          await pool.query('SELECT genroc.complete($1, $2, $3::jsonb)', [t.instance_id, t.epoch, '{}']);
          h.onDone(it);
        }
      };
      loop = (async () => {
        while (!stopping) {
          const free = conc - inflight;
          if (free <= 0) { await new Promise((r) => { slotFree = r; }); continue; }
          const armed = new Promise((r) => { wake = r; setTimeout(r, 1000); });
          const { rows } = await pool.query(
            'SELECT instance_id, epoch, state, input FROM genroc.claim($1, ARRAY[\'default\'], $2)',
            [worker, Math.min(free, batch)]);
          for (const t of rows) {
            inflight++;
            run(t).catch((e) => console.error('[genroc] task', t.instance_id, e.message)).finally(() => {
              inflight--;
              if (slotFree) { const f = slotFree; slotFree = null; f(); }
            });
          }
          if (rows.length === 0) await armed; else wake = null;
        }
      })();
    },
    async stopWorker() {
      stopping = true;
      if (wake) { const w = wake; wake = null; w(); }
      if (loop) await loop.catch(() => {});
      loop = null;
      if (listener) { await listener.end().catch(() => {}); listener = null; }
    },
    async remaining() {
      return withClient(db, async (c) => (await c.query(
        `SELECT count(*)::int AS n FROM genroc.instances WHERE status NOT IN ('succeeded','failed','cancelled')`)).rows[0].n);
    },
    async close() {
      await d.stopWorker();
      if (pool) await pool.end().catch(() => {});
    },
  };
  return d;
}
