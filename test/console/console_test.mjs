// console_test.mjs — the web console in headless Chromium, against one
// running `genroc serve --auth` (run.sh starts it and sets the environment).
//
// Every step prints a TAP line; a step that throws is "not ok" with the
// reason, and the run goes on where it can.  Results of the page's actions
// are checked in the database itself with SQL (sqlite3 or psql), not only on
// the page.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const { chromium } = createRequire(join(root, 'web/package.json'))('playwright-core');

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set (run test/console/run.sh)`);
  return v;
};
const STORE = env('STORE');
const BASE = env('BASE');
const ADMIN = env('ADMIN_TOKEN');
const READER = env('READER_TOKEN');
const ARTIFACTS = env('ARTIFACTS');

let failures = 0;
async function step(name, fn) {
  try {
    await fn();
    console.log(`ok - ${STORE}: ${name}`);
  } catch (err) {
    failures++;
    console.log(`not ok - ${STORE}: ${name}`);
    console.log(`# ${String(err && err.stack ? err.stack : err).split('\n').slice(0, 6).join('\n# ')}`);
  }
}
function check(cond, message) {
  if (!cond) throw new Error(message);
}

// One SQL answer from the store's database.
function sql(query) {
  const target = env('SQL_TARGET');
  if (env('SQL_KIND') === 'sqlite') {
    return execFileSync('sqlite3', ['-readonly', target, query], { encoding: 'utf8' }).trim();
  }
  return execFileSync('psql', ['-X', '-A', '-t', '-q', target, '-c', query], { encoding: 'utf8' }).trim();
}
const statusInDb = (id) => sql(env('SQL_KIND') === 'sqlite'
  ? `SELECT status FROM instances WHERE id = ${Number(id)}`
  : `SELECT genroc.get_instance(${Number(id)}) ->> 'status'`);
const eventsInDb = (id) => sql(env('SQL_KIND') === 'sqlite'
  ? `SELECT group_concat(event, ' ') FROM (SELECT event FROM log WHERE instance_id = ${Number(id)} ORDER BY seq)`
  : `SELECT string_agg(event, ' ' ORDER BY seq) FROM genroc.history(${Number(id)})`).split(' ');

async function call(path, { method = 'GET', body, token = ADMIN } = {}) {
  const res = await fetch(`${BASE}/api${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function until(what, fn, ms = 15000) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// A definition with every shape the graph draws: a Parallel of two branches,
// a Map, a Choice, a Catch, an event wait and a failing task.
const FLOW = {
  StartAt: 'Prepare',
  States: {
    Prepare: { Type: 'Pass', Next: 'Fan' },
    Fan: {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'Stock', States: { Stock: { Type: 'Task', Resource: 'genroc:noop', End: true } } },
        { StartAt: 'Price', States: { Price: { Type: 'Pass', Result: 7, End: true } } },
      ],
      ResultPath: '$.fan',
      Next: 'Each',
    },
    Each: {
      Type: 'Map',
      ItemsPath: '$.items',
      ItemProcessor: { StartAt: 'Item', States: { Item: { Type: 'Pass', End: true } } },
      ResultPath: '$.each',
      Next: 'Check',
    },
    Check: {
      Type: 'Choice',
      Choices: [{ Variable: '$.fail', BooleanEquals: true, Next: 'Charge' }],
      Default: 'Hold',
    },
    Charge: {
      Type: 'Task',
      Resource: 'genroc:fail',
      Parameters: { Error: 'Card.Declined', Cause: 'the card was declined' },
      Catch: [{ ErrorEquals: ['Card.Expired'], Next: 'Done' }],
      Next: 'Done',
    },
    Hold: { Type: 'Task', Resource: 'genroc:event', Parameters: { Name: 'go' }, Next: 'Done' },
    Done: { Type: 'Succeed' },
  },
};

const ids = {};
await step('setup through the API', async () => {
  await call('/definitions', { method: 'POST', body: { name: 'flow', definition: FLOW } });
  await call('/definitions', { method: 'POST', body: { name: 'tiny', definition: { StartAt: 'A', States: { A: { Type: 'Succeed' } } } } });
  const start = async (definition, input, labels) =>
    (await call('/instances', { method: 'POST', body: { definition, input, options: { labels } } })).instance_id;
  ids.failing = await start('flow', { fail: true, items: [1, 2, 3] }, { tenant: 'acme' });
  ids.failing2 = await start('flow', { fail: true, items: [1] }, { tenant: 'acme' });
  ids.waiting = await start('flow', { fail: false, items: [1] }, { tenant: 'zeta' });
  ids.waiting2 = await start('flow', { fail: false, items: [] }, { tenant: 'zeta' });
  for (let i = 0; i < 55; i++) await start('tiny', {}, { batch: 'b' });
  for (const id of [ids.failing, ids.failing2]) await until(`#${id} failed`, async () => (await call(`/instances/${id}`)).status === 'failed');
  for (const id of [ids.waiting, ids.waiting2]) await until(`#${id} waiting`, async () => (await call(`/instances/${id}`)).status === 'waiting');
});

const browser = await chromium.launch({ executablePath: env('CHROMIUM'), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
const page = await context.newPage();
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(String(e)));
page.on('dialog', (d) => d.accept());
const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `${STORE}-${name}.png`), fullPage: true });

// Light enough to load in under a second: what the page fetches is small
// and the binary answers it at once (timed here, not asserted tightly: on
// this shared 2-core machine Chromium's own processes wait for a CPU; the
// browser's figure is printed, with a generous bound).
await step('the console is small and loads from the binary', async () => {
  await page.goto(`${BASE}/ui/`, { waitUntil: 'load' }); // the browser's own start-up
  await page.reload({ waitUntil: 'load' });
  const load = await page.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
  let server = 0;
  let bytes = 0;
  for (const f of ['', 'app.js', 'app.css']) {
    const t0 = performance.now();
    const res = await fetch(`${BASE}/ui/${f}`);
    bytes += (await res.arrayBuffer()).byteLength;
    server += performance.now() - t0;
  }
  console.log(`# ${STORE}: /ui/ is ${bytes} bytes; the browser loaded it in ${Math.round(load)} ms; ` +
    `the three files fetched in ${server.toFixed(1)} ms`);
  check(bytes < 150 * 1024, `the page is ${bytes} bytes`);
  check(server < 2000, `the binary took ${server.toFixed(1)} ms to serve the page`);
  check(load < 5000, `the page took ${Math.round(load)} ms to load`);
  await page.waitForSelector('#credential');
  const res = await fetch(`${BASE}/ui/app.js`);
  check(res.ok && (res.headers.get('content-security-policy') || '').includes("script-src 'self'"), 'app.js without its CSP');
  check((await fetch(`${BASE}/ui/nope.js`)).status === 404, '/ui/nope.js is not 404');
  await shot('signin');
});

await step('a wrong token is refused at sign-in', async () => {
  await page.fill('#credential', 'grt_000000000000_' + '0'.repeat(64));
  await page.click('#signin');
  await page.waitForSelector('#signin-error .error');
});

await step('a reader signs in, sees the list and no action', async () => {
  await page.fill('#credential', READER);
  await page.click('#signin');
  await page.waitForSelector('#instances tr[data-id]');
  await page.goto(`${BASE}/ui/#/instance/${ids.failing}`);
  await page.waitForSelector('#read-only');
  check(await page.locator('#cancel, #retry').count() === 0, 'a reader sees action buttons');
  // the API refuses the reader anyway
  const r = await fetch(`${BASE}/api/instances/${ids.failing}/retry`, { method: 'POST', headers: { Authorization: `Bearer ${READER}` } });
  check(r.status === 403, `reader's retry answered ${r.status}`);
  await page.click('#signout');
  await page.waitForSelector('#credential');
});

await step('an admin signs in', async () => {
  await page.fill('#credential', ADMIN);
  await page.click('#signin');
  await page.waitForSelector('#instances table');
  check((await page.textContent('#who')).includes('console-admin'), 'the header does not name the admin');
});

const listed = async () => page.$$eval('#instances tr[data-id]', (rows) => rows.map((r) => Number(r.dataset.id)));

await step('filter by status, definition, label and time', async () => {
  await page.selectOption('#f-status', 'failed');
  await page.click('#apply');
  await until('failed rows only', async () => {
    const got = await listed();
    return got.length === 2 && got.includes(ids.failing) && got.includes(ids.failing2);
  });
  await page.goto(`${BASE}/ui/#/instances`);
  await page.waitForSelector('#f-definition option[value="flow"]', { state: 'attached' });
  await page.selectOption('#f-definition', 'flow');
  await page.fill('#f-label', 'tenant:zeta');
  await page.click('#apply');
  await until('the zeta rows', async () => JSON.stringify(await listed()) === JSON.stringify([ids.waiting2, ids.waiting]));
  await shot('filtered');
  // a time window that ends before anything was made: nothing
  await page.fill('#f-label', '');
  await page.fill('#f-before', '2000-01-01T00:00');
  await page.click('#apply');
  await page.waitForSelector('#empty');
});

await step('pages of 50 by keyset, no row twice', async () => {
  await page.goto(`${BASE}/ui/#/instances?definition=tiny`);
  await until('a full first page', async () => (await listed()).length === 50);
  const first = await listed();
  await page.click('#older');
  await until('the second page', async () => (await listed()).length === 5);
  const second = await listed();
  check(Math.min(...first) > Math.max(...second), 'the second page is not older than the first');
  const ref = await call('/instances?definition=tiny&limit=1000');
  check(JSON.stringify([...first, ...second]) === JSON.stringify(ref.instances.map((i) => i.id)), 'pages differ from the API');
  await page.click('#newer');
  await until('the first page again', async () => JSON.stringify(await listed()) === JSON.stringify(first));
});

await step('the list updates live', async () => {
  await page.goto(`${BASE}/ui/#/instances?definition=tiny`);
  await page.waitForSelector('#instances table');
  const id = (await call('/instances', { method: 'POST', body: { definition: 'tiny' } })).instance_id;
  await page.waitForSelector(`#instances tr[data-id="${id}"]`, { timeout: 10000 });
});

await step('a failed instance: graph, path, failed state, error and cause', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.failing}`);
  await page.waitForSelector('#graph svg .node');
  const failed = await page.$$eval('#graph svg .node.failed', (n) => n.map((x) => x.dataset.state));
  check(JSON.stringify(failed) === '["Charge"]', `failed states: ${failed}`);
  const visited = await page.$$eval('#graph svg .node.visited', (n) => n.map((x) => x.dataset.state));
  for (const s of ['Prepare', 'Fan', 'Each', 'Check', 'Charge']) check(visited.includes(s), `${s} not marked visited: ${visited}`);
  check(!visited.includes('Hold'), 'Hold marked visited');
  const groups = await page.$$eval('#graph svg .group', (n) => n.map((x) => x.dataset.group));
  for (const g of ['Fan', 'Fan/0', 'Fan/1', 'Each']) check(groups.includes(g), `group ${g} missing: ${groups}`);
  check((await page.textContent('#error')) === 'Card.Declined', 'error not shown');
  check((await page.textContent('#cause')).includes('declined'), 'cause not shown');
  check((await page.textContent('#timeline')).includes('entered'), 'no history');
  const tree = await page.$$eval('#tree a', (a) => a.length);
  check(tree >= 5, `tree has ${tree} links (2 branches, 3 items)`);
  await shot('instance-failed');
  // the picture the README shows (docs/console-instance.png): the top of the page
  await page.screenshot({ path: join(ARTIFACTS, `${STORE}-instance-top.png`), fullPage: true,
    clip: { x: 0, y: 0, width: 1440, height: 1720 } });
});

await step('a branch instance marks its own states and links back', async () => {
  const kids = (await call(`/instances?root=${ids.failing}`)).instances;
  const branch = kids.find((k) => k.scope && k.scope.endsWith('/Branches/0'));
  check(branch, `no first branch among ${JSON.stringify(kids.map((k) => k.scope))}`);
  await page.click(`#tree a[href="#/instance/${branch.id}"]`);
  await page.waitForSelector('#graph svg .node.visited[data-state="Fan/0/Stock"]');
  check(await page.locator('#graph svg .node.visited[data-state="Prepare"]').count() === 0, 'the parent path marked on a branch');
  await page.click(`#facts a[href="#/instance/${ids.failing}"]`);
  await page.waitForSelector('#graph svg .node.failed[data-state="Charge"]');
});

await step('retry from the page, checked in the database', async () => {
  await page.click('#retry');
  await page.waitForSelector('#action-result .ok');
  await until('a retried row in the log', async () => eventsInDb(ids.failing).includes('retried'));
  await until('failed again (genroc:fail fails every time)', async () => statusInDb(ids.failing) === 'failed');
  const n = eventsInDb(ids.failing).filter((e) => e === 'retried').length;
  check(n === 1, `${n} retried rows`);
});

await step('resume with an output from the page', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.failing2}`);
  await page.click('#resume-open');
  await page.fill('#resume-output', '{"charged": false}');
  await page.click('#resume');
  await until('succeeded in the database', async () => statusInDb(ids.failing2) === 'succeeded');
  check(eventsInDb(ids.failing2).includes('resumed'), 'no resumed row');
});

await step('a waiting instance: current state marked, cancel from the page', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.waiting}`);
  await page.waitForSelector('#graph svg .node.current');
  const current = await page.$$eval('#graph svg .node.current', (n) => n.map((x) => x.dataset.state));
  check(JSON.stringify(current) === '["Hold"]', `current: ${current}`);
  await shot('instance-waiting');
  await page.click('#cancel');
  await until('cancelled in the database', async () => statusInDb(ids.waiting) === 'cancelled');
  await page.waitForSelector('#facts .s-cancelled');
});

await step('emit an event from the page', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.waiting2}`);
  await page.waitForSelector('#emit-open');
  await page.click('#emit-open');
  await page.fill('#event-name', 'go');
  await page.fill('#event-payload', '{"approved": true}');
  await page.click('#emit');
  await until('succeeded in the database', async () => statusInDb(ids.waiting2) === 'succeeded');
});

await step('definitions with versions and graphs', async () => {
  await call('/definitions', { method: 'POST', body: { name: 'tiny', definition: { StartAt: 'B', States: { B: { Type: 'Pass', End: true } } } } });
  await page.goto(`${BASE}/ui/#/definitions`);
  await page.waitForSelector('#definitions a[href="#/definition/tiny"]');
  await page.click('#definitions a[href="#/definition/tiny"]');
  await page.waitForSelector('#graph svg [data-state="B"]');
  await page.selectOption('#version', '1');
  await page.waitForSelector('#graph svg [data-state="A"]');
  await page.goto(`${BASE}/ui/#/definition/flow`);
  await page.waitForSelector('#graph svg [data-state="Fan/0/Stock"]');
  await shot('definition');
});

await step('workers and queues', async () => {
  await page.goto(`${BASE}/ui/#/workers`);
  await page.waitForSelector('#workers table');
  check((await page.textContent('#workers')).includes(`console-${STORE}`), 'the worker is not listed');
  await page.waitForSelector('#health');
  await page.goto(`${BASE}/ui/#/queues`);
  await page.waitForSelector('#queues table');
  check((await page.textContent('#queues')).includes('default'), 'the default queue is not listed');
  await shot('queues');
});

await step('no error in the browser console', async () => {
  // 4xx answers the page asked for on purpose (the wrong token, the
  // reader's refusal) are logged by Chromium as failed loads; nothing else.
  const other = consoleErrors.filter((e) => !/status of 40[13]/.test(e));
  check(other.length === 0, other.join('\n'));
});

await browser.close();
process.exitCode = failures ? 1 : 0;
