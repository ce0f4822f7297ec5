// genroc driver for the peers' benchmark harness (../shared/bench-peers),
// in the same shape as its drivers: it drives genroc's SQL API from Node with
// `pg`, the way an application in any language would.
//
// Worker loop (all variants): one claimer connection, which LISTENs genroc
// (the engine notifies when a task becomes ready), calls
// genroc.claim_wait() for up to `batch` tasks held (queued locally and
// running; at most `conc` run at once) and hands each task to the handler.
// With nothing ready the call waits in the server, up to 1 s, and the
// notification of a new task wakes it there: it claims at once, with no
// round trip from the notification to a claim.  (An extension without
// claim_wait: genroc.claim, then a wait for the notification in Node with a
// 1 s poll as the backstop.)  Default: each report is
// its own genroc.complete() on a pool of conc + 2 connections, a workflow
// step's genroc.complete_and_claim(), which hands the workflow's next step
// back to the same slot.
// Variants: default = batch 16; tuned = batch 100 (like the peers' tuned
// local queues), and the reports batched: those made in the same tick of the
// event loop go in one genroc.complete_many call (graphile-worker's tuned
// completeJobBatchDelay 0 does the same with its completions), and a slot is
// free once its report is queued (graphile-worker does not await its batched
// completeJob either; at most `batch` reports wait); a workflow's next step
// is then claimed like any ready task (no hand-back: the report is not
// awaited).
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

// The hot-path calls as named prepared statements (parsed and planned once
// per connection), as graphile-worker makes its own (preparedStatements,
// on by default) and as an application using the SQL API would.
const named = (name, text, values) => ({ name: `genroc_${name}`, text, values });
const STEP = { S1: 1, S2: 2, S3: 3 };

// A batch of starts: genroc.start_many (one statement, the instances and
// their log written set-wise); an extension without it (an older version
// under GENROC_VERSION) gets genroc.start per row over jsonb_array_elements.
let startManyMissing = false;
export async function startBatch(pool, def, items) {
  if (!startManyMissing) {
    try {
      await pool.query(named('start_many', 'SELECT count(*) FROM genroc.start_many($1, $2::jsonb)', [def, JSON.stringify(items)]));
      return;
    } catch (e) {
      if (e.code !== '42883') throw e;
      startManyMissing = true;
    }
  }
  await pool.query(`SELECT s.instance_id FROM jsonb_array_elements($2::jsonb) AS p(v),
    LATERAL genroc.start($1, p.v) AS s`, [def, JSON.stringify(items)]);
}

// Reports batched per tick of the event loop: report() queues one and
// answers its row of the genroc.complete_many call that carries it.  An
// extension without complete_many (42883) or a failed batch gets them one
// by one (genroc.complete).
function reportBatcher(pool) {
  let queued = [];
  let missing = false;
  const flush = async () => {
    const batch = queued;
    queued = [];
    if (!missing) {
      try {
        const { rows } = await pool.query(named('complete_many',
          'SELECT instance_id, status, sqlstate FROM genroc.complete_many($1::bigint[], $2::bigint[], $3::jsonb[])',
          [batch.map((r) => r.id), batch.map((r) => r.epoch), batch.map((r) => r.output)]));
        batch.forEach((r, k) => r.done(rows[k]));
        return;
      } catch (e) {
        if (e.code === '42883') missing = true;
      }
    }
    for (const r of batch) {
      pool.query(named('complete_status', 'SELECT genroc.complete($1, $2, $3::jsonb) AS status', [r.id, r.epoch, r.output]))
        .then(({ rows }) => r.done(rows[0]), r.fail);
    }
  };
  return (id, epoch, output) => new Promise((done, fail) => {
    if (queued.length === 0) setImmediate(() => { flush().catch((e) => console.error('[genroc] reports', e.message)); });
    queued.push({ id, epoch, output: JSON.stringify(output), done, fail });
  });
}

export default async function make({ url, db, variant, conc }) {
  const batch = variant === 'tuned' ? 100 : conc;
  let pool, listener, stopping = false, loop = null, wake = null, report = null, claimWaitMissing = false;
  const worker = `bench-${process.pid}`;

  const d = {
    name: 'genroc',
    version: process.env.GENROC_VERSION || '0.1',
    config: { concurrency: conc, claim_batch: batch, pool_max: conc + 2, durability: process.env.GENROC_DURABILITY || 'default',
      batched_reports: variant === 'tuned' },
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
      if (variant === 'tuned') report = reportBatcher(pool);
    },
    async enqueueBatch(items) {
      const def = items[0].wf !== undefined ? 'bench3' : 'bench1';
      await startBatch(pool, def, items);
    },
    async enqueueOne(it) { await pool.query(named('start', 'SELECT genroc.start($1, $2::jsonb)', ['bench1', JSON.stringify(it)])); },
    async startWorker(h) {
      stopping = false;
      listener = new pg.Client({ connectionString: url });
      await listener.connect();
      listener.on('notification', () => { if (wake) { const w = wake; wake = null; w(); } });
      await listener.query('LISTEN genroc');
      let inflight = 0;
      let slotFree = null;
      const pending = new Set();	// tuned: reports queued, not yet committed
      const run = async (first) => {
        const it = first.input;
        if (report) {
          // tuned: every report batched (complete_many), the slot free once
          // the handler returned and its report is queued, as
          // graphile-worker's tuned completeJob (not awaited: its batch
          // commits later); at most `batch` reports wait, and the harness's
          // window ends when all are in the database (remaining() = 0).  A
          // workflow's next step is claimed like any ready task.
          const k = it.wf !== undefined ? STEP[first.state] : 0;
          if (k <= 1) h.onStart(it);
          if (k > 0) h.onStep(it.wf, k);
          const sent = report(first.instance_id, first.epoch, k > 0 ? it : {});
          pending.add(sent);
          sent.catch((e) => console.error('[genroc] report', first.instance_id, e.message))
            .finally(() => pending.delete(sent));
          if (pending.size >= batch) await Promise.race(pending);
          if (k === 0) h.onDone(it);
          else if (k === 3) h.onDone({ wf: it.wf });
        } else if (it.wf !== undefined) {
          // a step's report hands back the workflow's next step to this
          // worker (complete_and_claim): no claim round trip between steps
          for (let t = first; t;) {
            const k = STEP[t.state];
            if (k === 1) h.onStart(it);
            h.onStep(it.wf, k);
            let next = null;
            if (stopping) {
              await pool.query(named('complete', 'SELECT genroc.complete($1, $2, $3::jsonb)', [t.instance_id, t.epoch, JSON.stringify(it)]));
            } else {
              const { rows } = await pool.query(named('complete_and_claim',
                'SELECT status, instance_id, epoch, state FROM genroc.complete_and_claim($1, $2, $3::jsonb, $4, ARRAY[\'default\'])',
                [t.instance_id, t.epoch, JSON.stringify(it), worker]));
              if (rows[0] && rows[0].status === 'running' && rows[0].instance_id !== null) next = rows[0];
            }
            if (k === 3) h.onDone({ wf: it.wf });
            t = next;
          }
        } else {
          h.onStart(it);
          await pool.query(named('complete', 'SELECT genroc.complete($1, $2, $3::jsonb)', [first.instance_id, first.epoch, '{}']));
          h.onDone(it);
        }
      };
      // Claimed tasks wait in a local queue and run at most `conc` at a
      // time; the loop claims again when the tasks held (queued and
      // running) leave room for a claim's worth: up to `batch` are held
      // (tuned: 100 ahead, as graphile-worker's localQueue.size; default:
      // `conc`, a claim per free slot).
      const local = [];
      const pump = () => {
        while (inflight < conc && local.length > 0) {
          const t = local.shift();
          inflight++;
          run(t).catch((e) => console.error('[genroc] task', t.instance_id, e.message)).finally(() => {
            inflight--;
            pump();
            if (slotFree) { const f = slotFree; slotFree = null; f(); }
          });
        }
      };
      const least = variant === 'tuned' ? Math.min(conc, batch) : 1;
      const claim = async (room) => {
        if (!claimWaitMissing) {
          try {
            return (await listener.query(named('claim_wait',
              'SELECT instance_id, epoch, state, input FROM genroc.claim_wait($1, ARRAY[\'default\'], $2, $3::interval)',
              [worker, room, stopping ? '0 s' : '1 s']))).rows;
          } catch (e) {
            if (e.code !== '42883') throw e;
            claimWaitMissing = true;
          }
        }
        const armed = new Promise((r) => { wake = r; setTimeout(r, 1000); });
        const { rows } = await listener.query(named('claim',
          'SELECT instance_id, epoch, state, input FROM genroc.claim($1, ARRAY[\'default\'], $2)',
          [worker, room]));
        if (rows.length === 0) await armed; else wake = null;
        return rows;
      };
      loop = (async () => {
        while (!stopping) {
          const room = batch - local.length - inflight;
          if (room < least) { await new Promise((r) => { slotFree = r; }); continue; }
          const rows = await claim(room);
          local.push(...rows);
          pump();
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
