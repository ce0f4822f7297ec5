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
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok - ${STORE}: ${name} # ${Date.now() - t0} ms`);
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

// A Map of 20 items, three at a time, each waiting for an event "go".
const ITEMS = {
  StartAt: 'Each',
  States: {
    Each: {
      Type: 'Map', ItemsPath: '$.items', MaxConcurrency: 3,
      ItemProcessor: { StartAt: 'Wait', States: { Wait: { Type: 'Task', Resource: 'genroc:event', Parameters: { Name: 'go' }, End: true } } },
      End: true,
    },
  },
};
// A Map of 100 items where item 3 fails.
const BADMAP = {
  StartAt: 'Each',
  States: {
    Each: {
      Type: 'Map', ItemsPath: '$.items',
      ItemProcessor: {
        StartAt: 'Pick',
        States: {
          Pick: { Type: 'Choice', Choices: [{ Variable: '$', NumericEquals: 3, Next: 'Fail' }], Default: 'Work' },
          Fail: { Type: 'Task', Resource: 'genroc:fail', Parameters: { Error: 'Bad.Item', Cause: 'item 3 is bad' }, End: true },
          Work: { Type: 'Task', Resource: 'genroc:noop', End: true },
        },
      },
      End: true,
    },
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
  ids.quiet = await start('flow', { fail: false, items: [1, 2] }, { tenant: 'quiet' });
  for (let i = 0; i < 55; i++) await start('tiny', {}, { batch: 'b' });
  await call('/definitions', { method: 'POST', body: { name: 'items', definition: ITEMS } });
  await call('/definitions', { method: 'POST', body: { name: 'badmap', definition: BADMAP } });
  await call('/definitions', { method: 'POST', body: { name: 'failer', definition: { StartAt: 'Boom', States: { Boom: { Type: 'Task', Resource: 'genroc:fail', Parameters: { Error: 'Boom', Cause: 'it always fails' }, End: true } } } } });
  ids.items = await start('items', { items: Array.from({ length: 20 }, (_, i) => i) }, {});
  ids.badmap = (await call('/instances', { method: 'POST', body: { definition: 'badmap', input: { items: Array.from({ length: 100 }, (_, i) => i) }, options: { name: 'hundred' } } })).instance_id;
  ids.failers = [];
  for (let i = 0; i < 4; i++) ids.failers.push((await call('/instances', { method: 'POST', body: { definition: 'failer', options: { name: `failer-${i}` } } })).instance_id);
  for (const id of [ids.badmap, ...ids.failers]) await until(`#${id} failed`, async () => (await call(`/instances/${id}`)).status === 'failed');
  await until('three items waiting', async () => ((await call(`/instances/${ids.items}`)).children || {}).running === 3);
  for (const id of [ids.failing, ids.failing2]) await until(`#${id} failed`, async () => (await call(`/instances/${id}`)).status === 'failed');
  for (const id of [ids.waiting, ids.waiting2, ids.quiet]) await until(`#${id} waiting`, async () => (await call(`/instances/${id}`)).status === 'waiting');
});

const browser = await chromium.launch({ executablePath: env('CHROMIUM'), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
// a short refresh interval: "three refreshes" take 0.6 s, not 6 s
const POLL = 200;
await context.addInitScript((ms) => localStorage.setItem('genroc.poll_ms', String(ms)), POLL);
const page = await context.newPage();
const consoleErrors = [];
page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
page.on('pageerror', (e) => consoleErrors.push(String(e)));
const dialogs = [];
page.on('dialog', (d) => {
  dialogs.push(d.message());
  d.accept();
});
// Waits until the page has drawn `n` more refreshes (<body data-polls>).
const polls = () => page.evaluate(() => Number(document.body.dataset.polls || 0));
async function refreshes(n) {
  const from = await polls();
  await until(`${n} refreshes`, async () => (await polls()) >= from + n, 10000);
}
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
  await page.waitForSelector('#f-definition option[value="flow"]', { state: 'attached' });
  await page.selectOption('#f-status', 'failed');
  await page.selectOption('#f-definition', 'flow');
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
  check((await page.textContent('#history')).includes('entered'), 'no history');
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

await step('only the transitions taken are marked', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.failing}`);
  await page.waitForSelector('#graph svg .node.failed');
  const walked = await page.$$eval('#graph svg .edge.walked', (n) => n.map((x) => x.dataset.edge));
  for (const e of ['__start>Prepare', 'Prepare>Fan', 'Fan/join>Each', 'Each/join>Check', 'Check>Charge:rule 1']) {
    check(walked.includes(e), `${e} not marked taken: ${walked}`);
  }
  for (const e of ['Check>Hold:default', 'Charge>Done', 'Charge>Done:Card.Expired', 'Hold>Done', 'Done>__end']) {
    check(!walked.includes(e), `${e} marked taken: ${walked}`);
  }
});

await step('states inside Parallel and Map are coloured by their outcome', async () => {
  for (const s of ['Fan/0/Stock', 'Fan/1/Price', 'Each/Item']) {
    await page.waitForSelector(`#graph svg .node.ok[data-state="${s}"]`);
  }
  const walked = await page.$$eval('#graph svg .edge.walked', (n) => n.map((x) => x.dataset.edge));
  for (const e of ['Fan>Fan/0/Stock', 'Fan/1/Price>Fan/join', 'Each>Each/Item']) check(walked.includes(e), `${e} not taken: ${walked}`);
});

await step('clicking a state opens its panel: input, output, error, attempts, events', async () => {
  await page.click('#graph svg [data-state="Charge"]');
  await page.waitForSelector('#state-panel:not([hidden]) #panel-title');
  check((await page.textContent('#panel-title')).includes('Charge'), 'the panel names another state');
  const input = JSON.parse(await page.textContent('#panel-input'));
  check(input.Error === 'Card.Declined', `task input: ${JSON.stringify(input)}`);
  check((await page.textContent('#panel-error')) === 'Card.Declined', 'no error in the panel');
  check((await page.textContent('#panel-cause')).includes('declined'), 'no cause in the panel');
  const workers = await page.$$eval('#panel-attempts td.worker', (n) => n.map((x) => x.textContent));
  check(workers.length === 1 && workers[0] === `console-${STORE}`, `attempts: ${workers}`);
  const evs = await page.$$eval('#panel-events strong', (n) => n.map((x) => x.textContent));
  check(JSON.stringify(evs) === JSON.stringify(['entered', 'task_scheduled', 'task_started', 'task_failed', 'failed']), `events: ${evs}`);
  // a Pass state: its output is not in the log, and the panel says so
  await page.click('#graph svg [data-state="Prepare"]');
  await until('the Prepare panel', async () => (await page.textContent('#panel-title')).includes('Prepare'));
  check((await page.textContent('#panel-input')).includes('"fail": true'), "the first state's input is the instance's");
  // a history step opens the same panel; the history filters
  await page.fill('#history-filter', 'task_');
  const shown = await page.$$eval('#history tbody tr:not([hidden]) td:nth-child(2)', (n) => n.map((x) => x.textContent));
  check(shown.length > 0 && shown.every((t) => t.startsWith('task_')), `filtered history: ${shown}`);
  await page.click('#history tr:not([hidden]) button[data-step="Charge"]');
  await until('the Charge panel', async () => (await page.textContent('#panel-title')).includes('Charge'));
  await shot('state-panel');
});

await step('a detail stays open across three refreshes; an ended instance is not polled', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.quiet}`);
  await page.waitForSelector('#history details');
  await refreshes(1);
  const detail = await page.$('#history tbody tr details');
  await detail.evaluate((d) => { d.open = true; });
  const input = await page.$('#input');
  await refreshes(3);
  check(await detail.evaluate((d) => d.isConnected && d.open), 'the open detail was closed or redrawn');
  check(await input.evaluate((p) => p.isConnected), 'the Input pane was redrawn');
  // an ended one: drawn once, then no call at all
  const tiny = (await call('/instances?definition=tiny&limit=1')).instances[0].id;
  const asked = [];
  const onRequest = (r) => { if (r.url().includes('/api/instances/')) asked.push(r.url()); };
  page.on('request', onRequest);
  await page.goto(`${BASE}/ui/#/instance/${tiny}`);
  await until('the ended stamp', async () => (await page.textContent('#live-slot')).includes('ended'));
  const n = asked.length;
  await new Promise((r) => setTimeout(r, POLL * 5)); // five intervals with nothing to wait for
  page.off('request', onRequest);
  check(asked.length === n, `${asked.length - n} calls after the end: ${asked.slice(n)}`);
});

await step('the list shows top-level instances, children with the toggle', async () => {
  await page.goto(`${BASE}/ui/#/instances?definition=badmap`);
  await page.waitForSelector('#instances tr[data-id]');
  check(JSON.stringify(await listed()) === JSON.stringify([ids.badmap]), `top-level: ${await listed()}`);
  await page.check('#f-all');
  await page.click('#apply');
  await until('the items too', async () => (await listed()).length === 50);
  check((await page.textContent('#instances')).includes(`↳ #${ids.badmap}`), 'no child row');
});

await step("a Map's counts and bar are genctl's", async () => {
  // two items get their event: 2 succeeded, 3 running, 15 waiting
  const kids = (await call(`/instances?parent=${ids.items}&status=waiting&limit=3`)).instances.filter((k) => k.wait_kind === 'event');
  for (const k of kids.slice(0, 2)) await call(`/instances/${k.id}/events/go`, { method: 'POST', body: {} });
  await until('2 succeeded, 3 running', async () => {
    const c = (await call(`/instances/${ids.items}`)).children;
    return c.succeeded === 2 && c.running === 3;
  });
  await page.goto(`${BASE}/ui/#/instance/${ids.items}`);
  await page.waitForSelector('#fanout-counts');
  const shown = await page.textContent('#fanout-counts');
  const line = execFileSync(env('GENCTL'), ['--database', env('SQL_TARGET'), 'instances', 'show', String(ids.items)], { encoding: 'utf8' })
    .split('\n').find((l) => l.startsWith('children:'));
  check(line && line.replace(/^children:\s+/, '') === shown, `console "${shown}", genctl "${line}"`);
  check(shown === 'map, 20: 2 succeeded, 0 failed, 3 running, 15 waiting', shown);
  const bar = await page.$$eval('#fanout-bar rect[data-n]', (n) => n.map((x) => `${x.getAttribute('class')}=${x.dataset.n}`));
  check(JSON.stringify(bar) === JSON.stringify(['seg ok=2', 'seg running=3', 'seg waiting=15']), `bar: ${bar}`);
  await page.waitForSelector('#graph svg .node.current[data-state="Each/Wait"]');
  await page.waitForSelector('#graph svg .node.current[data-state="Each"]');
  // waiting for its children: Cancel, and no event to send
  check(await page.locator('#emit-open').count() === 0, 'emit offered while it waits for its children');
  check(await page.locator('#cancel').count() === 1, 'no cancel');
  await shot('map-progress');
});

await step('a failed 100-item Map names and links its failed item', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.badmap}`);
  await page.waitForSelector('#failed-child');
  const item = (await call(`/instances?parent=${ids.badmap}&status=failed`)).instances;
  check(item.length === 1 && item[0].child_index === 3, `failed items: ${JSON.stringify(item.map((i) => i.child_index))}`);
  const text = await page.textContent('#failed-child');
  check(text.includes('item [3] failed in Fail') && text.includes('Bad.Item') && text.includes('item 3 is bad'), text);
  await page.waitForSelector('#graph svg .node.failed[data-state="Each/Fail"]');
  // actions: Retry (the Map runs again), Redrive (only its failed item), no Resume (not a Task), no event
  check(JSON.stringify((await call(`/instances/${ids.badmap}`)).actions) === '["retry","redrive"]',
    'the API offers other than retry and redrive');
  await page.waitForSelector('#retry');
  await page.waitForSelector('#redrive');
  check(await page.locator('#resume-open, #emit-open, #cancel').count() === 0, 'an action the API refuses is shown');
  // the item state's panel lists the failed item first, with its error
  await page.click('#graph svg [data-state="Each/Fail"]');
  await page.waitForSelector('#panel-children li');
  check((await page.textContent('#panel-children li')).includes(`#${item[0].id}`), 'the failed item is not first');
  await shot('map-failed');
  await page.click('#failed-child-link');
  await page.waitForSelector('#graph svg .node.failed[data-state="Each/Fail"]');
  check((await page.textContent('#error')) === 'Bad.Item', 'the item page shows no error');
  check((await page.textContent('#input')).trim() === '3', 'the item page shows another input');
  await page.waitForSelector('#no-action');
});

await step('retry from the page, checked in the database', async () => {
  await page.goto(`${BASE}/ui/#/instance/${ids.failing}`);
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
  check((await page.textContent('#emit-open')).includes('"go"'), 'the event the instance waits for is not named');
  await page.click('#emit-open');
  await page.fill('#event-payload', '{"approved": true}');
  await page.click('#emit');
  await until('succeeded in the database', async () => statusInDb(ids.waiting2) === 'succeeded');
});

await step('list columns, a name filter, a selection kept live, bulk retry of 3', async () => {
  await page.goto(`${BASE}/ui/#/instances?definition=failer`);
  await until('four failers', async () => (await listed()).length === 4);
  const row = await page.$$eval(`#instances tr[data-id="${ids.failers[0]}"] td`, (n) => n.map((x) => x.textContent));
  check(row[2] === 'failer-0' && row[3] === 'failer@1' && row[4] === 'failed' && row[7] === 'Boom' && /\d/.test(row[6]), `row: ${row}`);
  const picked = ids.failers.slice(0, 3);
  for (const id of picked) await page.check(`#instances input[data-pick="${id}"]`);
  const box = await page.$(`#instances input[data-pick="${picked[0]}"]`);
  await refreshes(3);
  check(await box.evaluate((b) => b.isConnected && b.checked), 'the selection was lost on a refresh');
  check((await page.textContent('#selected-count')).startsWith('3 selected'), 'count not shown');
  dialogs.length = 0;
  await page.click('#bulk-retry');
  await page.waitForSelector('#bulk-result .ok');
  check(dialogs[0] === 'Retry 3 instance(s)?', `confirmation: ${dialogs}`);
  for (const id of picked) check(eventsInDb(id).filter((e) => e === 'retried').length === 1, `#${id} not retried once`);
  check(!eventsInDb(ids.failers[3]).includes('retried'), 'an instance not selected was retried');
  // the name filter
  await page.goto(`${BASE}/ui/#/instances?name=failer-3&all=1`);
  await until('one row', async () => JSON.stringify(await listed()) === JSON.stringify([ids.failers[3]]));
  await shot('list');
});

await step('bulk cancel on a filter: a count and a confirmation', async () => {
  await page.goto(`${BASE}/ui/#/instances?definition=items`);
  await until('the items instance', async () => JSON.stringify(await listed()) === JSON.stringify([ids.items]));
  dialogs.length = 0;
  await page.click('#bulk-cancel-all');
  await page.waitForSelector('#bulk-result .ok');
  check(dialogs[0] === 'Cancel 1 instance(s)?', `confirmation: ${dialogs}`);
  await until('cancelled in the database', async () => statusInDb(ids.items) === 'cancelled');
  // a reader may not
  const r = await fetch(`${BASE}/api/instances/bulk`, { method: 'POST', headers: { Authorization: `Bearer ${READER}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ action: 'cancel', ids: [ids.quiet] }) });
  check(r.status === 403, `reader's bulk answered ${r.status}`);
});

await step('start execution with a checked input; versions side by side', async () => {
  await page.goto(`${BASE}/ui/#/definition/flow`);
  await page.click('#start-open');
  await page.fill('#start-input', '{"fail": false, "items": [1,]}');
  check(await page.isDisabled('#start'), 'a bad input can be sent');
  check((await page.textContent('#start-check')).startsWith('not JSON'), 'no JSON error shown');
  await page.fill('#start-input', '{"fail": false, "items": [7]}');
  await page.fill('#start-name', 'from-the-console');
  await page.click('#start');
  await page.waitForSelector('#facts');
  const id = Number((await page.textContent('#title')).match(/#(\d+)/)[1]);
  const made = await call(`/instances/${id}`);
  check(made.name === 'from-the-console' && JSON.stringify(made.input) === '{"fail":false,"items":[7]}', JSON.stringify(made.input));
  await call(`/instances/${id}/cancel`, { method: 'POST', body: {} });
  // the text as written when the server keeps it, else the stored JSON
  const d = await call('/definitions/flow');
  await page.goto(`${BASE}/ui/#/definition/flow`);
  await page.waitForSelector('#source');
  const text = await page.textContent('#source');
  check(text === (typeof d.source === 'string' ? d.source : JSON.stringify(d.definition, null, 2)), 'the source shown is not the definition');
});

await step('definitions with versions and graphs', async () => {
  await call('/definitions', { method: 'POST', body: { name: 'tiny', definition: { StartAt: 'B', States: { B: { Type: 'Pass', End: true } } } } });
  await page.goto(`${BASE}/ui/#/definitions`);
  await page.waitForSelector('#definitions a[href="#/definition/tiny"]');
  await page.click('#definitions a[href="#/definition/tiny"]');
  await page.waitForSelector('#graph svg [data-state="B"]');
  await page.selectOption('#version', '1');
  await page.waitForSelector('#graph svg [data-state="A"]');
  await page.selectOption('#diff-with', '2');
  await page.waitForSelector('#diff-summary');
  check((await page.textContent('#diff-summary')).startsWith('v1 → v2:'), await page.textContent('#diff-summary'));
  const changed = await page.$$eval('#diff tr.d-chg td', (n) => n.map((x) => x.textContent));
  check(changed.some((t) => t.includes('"A"')) && changed.some((t) => t.includes('"B"')), `changed lines: ${changed}`);
  await shot('definition-diff');
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
