// main.js — genroc's web console: a page per hash route, drawn from the HTTP
// API and refreshed by polling (every POLL_MS, while the tab is visible).
//
// Routes (the part after #):
//   /signin                     a token or a JWT, when the server runs --auth
//   /instances?status=&definition=&label=&after=&before=&page=
//                               the list, newest first, paged by id (keyset)
//   /instance/ID                one instance: graph, data, history, tree, actions
//   /definitions, /definition/NAME?version=N
//   /workers, /queues
import { api, ApiError, credential, query, setCredential } from './api.js';
import { badge, fmtAge, fmtMs, fmtTime, h, pretty } from './dom.js';
import { drawGraph, scopePrefix } from './graph.js';

const POLL_MS = 2000;
const PAGE = 50;
const STATUSES = ['queued', 'ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];
const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

let who = null; // {auth, name, permissions}
let timer = null;
let generation = 0; // bumped on every navigation: a late answer for an old page is dropped
let flash = null; // what an action answered, shown once on the page it redraws

const main = () => document.getElementById('main');

// May the signed-in user do this?  Mirrors the API's permissions (docs/security.md
// "Authentication"); the API refuses anyway.
function may(what) {
  if (!who || !who.auth) return true;
  const p = new Set(who.permissions || []);
  if (p.has('admin')) return true;
  if (what === 'operate') return p.has('operator');
  if (what === 'read') return p.has('reader') || p.has('operator');
  return false;
}

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/instances';
  const [path, qs] = raw.split('?');
  return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(qs || '') };
}

function go(path) {
  location.hash = path;
}

function showError(where, err) {
  const msg = err instanceof ApiError ? `${err.message} (${err.sqlstate || err.status})` : String(err.message || err);
  where.replaceChildren(h('p', { className: 'error', role: 'alert' }, msg));
}

// Runs `draw` now and every POLL_MS until the next navigation.  `draw`
// answers false to stop polling (a page with nothing live).
function live(draw) {
  const mine = generation;
  const tick = async () => {
    if (mine !== generation) return;
    let again = true;
    try {
      again = (await draw(mine)) !== false;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return signedOut();
      const slot = document.getElementById('live-error');
      if (slot) showError(slot, err);
    }
    if (mine === generation && again) timer = setTimeout(tick, document.hidden ? POLL_MS * 5 : POLL_MS);
  };
  return tick();
}

function signedOut() {
  setCredential('');
  who = null;
  go('/signin');
}

function stamp() {
  return h('span', { className: 'live', id: 'live-stamp' }, `live · ${new Date().toLocaleTimeString()}`);
}

// ---- sign-in --------------------------------------------------------------

function signinPage(message) {
  const input = h('input', { type: 'password', id: 'credential', name: 'credential', autocomplete: 'off',
    placeholder: 'grt_… token or a JWT', required: true });
  const out = h('div', { id: 'signin-error' });
  if (message) out.append(h('p', { className: 'error' }, message));
  const form = h('form', { className: 'signin', onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      who = await api('/whoami', { token: input.value.trim() });
      setCredential(input.value.trim());
      renderWho();
      go('/instances');
    } catch (err) {
      showError(out, err);
    }
  } },
  h('h1', {}, 'Sign in'),
  h('p', { className: 'muted' }, 'This server runs with --auth: paste an API token or a JWT. It is kept in this tab only.'),
  h('label', { for: 'credential' }, 'Token or JWT'), input,
  h('button', { type: 'submit', id: 'signin' }, 'Sign in'), out);
  main().replaceChildren(form);
  input.focus();
}

function renderWho() {
  const el = document.getElementById('who');
  if (!who || !who.auth) {
    el.replaceChildren(who ? h('span', { className: 'muted' }, 'no --auth: every action is open') : '');
    return;
  }
  el.replaceChildren(h('span', {}, `${who.name} · ${(who.permissions || []).join(', ') || 'no permission'}`),
    h('button', { className: 'link', id: 'signout', onclick: signedOut }, 'Sign out'));
}

// ---- instances ------------------------------------------------------------

function instancesPage(params) {
  const f = {
    status: params.get('status') || '',
    definition: params.get('definition') || '',
    label: params.get('label') || '',
    after: params.get('after') || '',
    before: params.get('before') || '',
  };
  const cursors = (params.get('cursors') || '').split(',').filter(Boolean); // the pages walked so far
  const defSelect = h('select', { name: 'definition', id: 'f-definition' }, h('option', { value: '' }, 'any definition'));
  if (f.definition) defSelect.append(h('option', { value: f.definition, selected: true }, f.definition));
  api('/definitions').then((r) => {
    for (const d of r.definitions) {
      if (d.name !== f.definition) defSelect.append(h('option', { value: d.name }, d.name));
    }
  }).catch(() => {});
  const toLocal = (iso) => (iso ? new Date(iso).toISOString().slice(0, 16) : '');
  const form = h('form', { className: 'filters', id: 'filters', onsubmit: (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const iso = (v) => (v ? new Date(`${v}Z`).toISOString() : '');
    go(`/instances${query({
      status: data.get('status'), definition: data.get('definition'), label: data.get('label').trim(),
      after: iso(data.get('after')), before: iso(data.get('before')),
    })}`);
  } },
  h('select', { name: 'status', id: 'f-status' }, h('option', { value: '' }, 'any status'),
    STATUSES.map((s) => h('option', { value: s, selected: s === f.status }, s))),
  defSelect,
  h('input', { name: 'label', id: 'f-label', placeholder: 'label k:v, k2:v2', value: f.label }),
  h('label', {}, 'created from ', h('input', { type: 'datetime-local', name: 'after', id: 'f-after', value: toLocal(f.after) })),
  h('label', {}, 'to ', h('input', { type: 'datetime-local', name: 'before', id: 'f-before', value: toLocal(f.before) })),
  h('span', { className: 'muted' }, '(UTC)'),
  h('button', { type: 'submit', id: 'apply' }, 'Filter'),
  h('a', { href: '#/instances', className: 'button subtle' }, 'Clear'));

  const table = h('div', { id: 'instances' });
  const pager = h('div', { className: 'pager' });
  main().replaceChildren(h('div', { className: 'titlebar' }, h('h1', {}, 'Instances'), h('span', { id: 'live-slot' })),
    form, h('div', { id: 'live-error' }), table, pager);

  const page = cursors.length ? Number(cursors[cursors.length - 1]) : null;
  const here = (cs) => `/instances${query({ ...f, cursors: cs.join(',') })}`;
  return live(async (mine) => {
    const labels = f.label.split(',').map((s) => s.trim()).filter(Boolean);
    const r = await api(`/instances${query({
      status: f.status, definition: f.definition, label: labels, created_after: f.after,
      created_before: f.before, before: page, limit: PAGE,
    })}`);
    if (mine !== generation) return false;
    const rows = r.instances;
    table.replaceChildren(rows.length ? instanceTable(rows) : h('p', { className: 'muted', id: 'empty' }, 'No instance matches.'));
    const older = rows.length === PAGE ? rows[rows.length - 1].id : null;
    pager.replaceChildren(
      cursors.length ? h('a', { className: 'button', id: 'newer', href: `#${here(cursors.slice(0, -1))}` }, '← Newer') : '',
      h('span', { className: 'muted' }, cursors.length ? `page ${cursors.length + 1}` : 'newest first'),
      older ? h('a', { className: 'button', id: 'older', href: `#${here([...cursors, older])}` }, 'Older →') : '');
    document.getElementById('live-slot').replaceChildren(stamp());
    return true;
  });
}

function labelsText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => `${k}:${v}`).join(' ');
}

function instanceTable(rows) {
  return h('table', { className: 'list' },
    h('thead', {}, h('tr', {}, ['id', 'definition', 'status', 'state', 'created', 'updated', 'labels'].map((c) => h('th', {}, c)))),
    h('tbody', {}, rows.map((i) => h('tr', { 'data-id': i.id },
      h('td', {}, h('a', { href: `#/instance/${i.id}` }, `#${i.id}`), i.parent_id ? h('span', { className: 'muted' }, ` ↳ #${i.parent_id}`) : ''),
      h('td', {}, `${i.definition} v${i.version}`),
      h('td', {}, badge(i.status)),
      h('td', {}, i.state || ''),
      h('td', { title: fmtTime(i.created_at) }, fmtAge(i.created_at)),
      h('td', { title: fmtTime(i.updated_at) }, fmtAge(i.updated_at)),
      h('td', { className: 'labels' }, labelsText(i.labels))))));
}

// ---- one instance ---------------------------------------------------------

// What the history says about the path: the states entered, in order.
function pathOf(history) {
  const visited = new Set();
  for (const e of history) if (e.state && e.event === 'entered') visited.add(e.state);
  return visited;
}

function instancePage(id) {
  const head = h('div', { className: 'titlebar' }, h('h1', {}, `Instance #${id}`), h('span', { id: 'live-slot' }));
  const actions = h('div', { className: 'actions', id: 'actions' });
  const result = h('div', { id: 'action-result' });
  if (flash) result.append(h('p', { className: 'ok', role: 'status' }, flash));
  flash = null;
  const graph = h('div', { className: 'graph-box', id: 'graph' });
  const facts = h('div', { className: 'facts', id: 'facts' });
  const data = h('div', { className: 'data', id: 'data' });
  const timeline = h('ol', { className: 'timeline', id: 'timeline' });
  const tree = h('div', { id: 'tree' });
  main().replaceChildren(head, h('div', { id: 'live-error' }), actions, result,
    h('section', { className: 'cols' },
      h('div', {}, h('h2', {}, 'State machine'), graph),
      h('div', {}, h('h2', {}, 'Instance'), facts, data)),
    h('section', { className: 'cols' },
      h('div', {}, h('h2', {}, 'History'), timeline),
      h('div', {}, h('h2', {}, 'Children and calls'), tree)));

  let drawnKey = '';
  let defCache = null;
  return live(async (mine) => {
    const inst = await api(`/instances/${id}`);
    const hist = (await api(`/instances/${id}/history`)).history;
    const rootId = inst.root_id || inst.id;
    // root=ID lists the instances below ID; the root itself comes apart
    const family = (await api(`/instances${query({ root: rootId, limit: 1000 })}`)).instances;
    family.push(rootId === inst.id ? inst : await api(`/instances/${rootId}`));
    const defKey = `${inst.definition}@${inst.version}`;
    if (!defCache || defCache.key !== defKey) {
      defCache = { key: defKey, def: (await api(`/definitions/${encodeURIComponent(inst.definition)}${query({ version: inst.version })}`)).definition };
    }
    if (mine !== generation) return false;

    const visited = pathOf(hist);
    const failed = inst.status === 'failed' ? inst.state : null;
    const current = ENDED.has(inst.status) ? null : inst.state;
    const key = JSON.stringify([defKey, [...visited], failed, current, inst.scope]);
    if (key !== drawnKey) {
      drawnKey = key;
      graph.replaceChildren(drawGraph(defCache.def, { prefix: scopePrefix(inst.scope), visited, failed, current }),
        h('p', { className: 'legend' }, h('span', { className: 'key visited' }, 'path taken'),
          h('span', { className: 'key current' }, 'current state'), h('span', { className: 'key failed' }, 'failed state'),
          h('a', { href: `#/definition/${encodeURIComponent(inst.definition)}?version=${inst.version}` }, `${inst.definition} v${inst.version}`)));
    }
    facts.replaceChildren(h('dl', {},
      fact('status', badge(inst.status)), fact('state', inst.state || '—'),
      fact('definition', h('a', { href: `#/definition/${encodeURIComponent(inst.definition)}?version=${inst.version}` }, `${inst.definition} v${inst.version}`)),
      fact('queue', inst.queue), fact('attempt', inst.attempt),
      inst.wait_kind ? fact('waiting for', `${inst.wait_kind}${inst.wait_until ? ` until ${fmtTime(inst.wait_until)}` : ''}`) : '',
      inst.lease_owner ? fact('leased to', `${inst.lease_owner} (epoch ${inst.lease_epoch})`) : '',
      inst.parent_id ? fact('parent', h('a', { href: `#/instance/${inst.parent_id}` }, `#${inst.parent_id}`)) : '',
      fact('labels', labelsText(inst.labels) || '—'),
      fact('created', fmtTime(inst.created_at)), fact('updated', fmtTime(inst.updated_at)),
      inst.ended_at ? fact('ended', fmtTime(inst.ended_at)) : ''));
    data.replaceChildren(
      block('Input', inst.input, 'input'),
      inst.output !== null && inst.output !== undefined ? block('Output', inst.output, 'output') : '',
      inst.error ? h('div', { className: 'failure', id: 'failure' }, h('h3', {}, 'Error'), h('p', { className: 'mono', id: 'error' }, inst.error),
        inst.cause ? [h('h3', {}, 'Cause'), h('pre', { id: 'cause' }, inst.cause)] : '') : '');
    timeline.replaceChildren(...hist.map((e) => h('li', { className: `ev ev-${e.event}` },
      h('time', { title: e.at }, fmtTime(e.at)), ' ', h('strong', {}, e.event), e.state ? ` ${e.state}` : '',
      e.detail && Object.keys(e.detail).length ? h('details', {}, h('summary', {}, 'detail'), h('pre', {}, pretty(e.detail))) : '')));
    tree.replaceChildren(familyTree(family, rootId, inst.id));
    if (!actions.dataset.status || actions.dataset.status !== inst.status) drawActions(actions, result, inst);
    document.getElementById('live-slot').replaceChildren(stamp());
    return true;
  });
}

function fact(name, value) {
  return [h('dt', {}, name), h('dd', {}, value)];
}

function block(title, value, id) {
  return h('div', {}, h('h3', {}, title), h('pre', { id }, pretty(value)));
}

// The tree of the instance's family (its root and every descendant), the
// current one marked.
function familyTree(family, rootId, currentId) {
  const kids = new Map();
  for (const i of family) {
    if (!i.parent_id) continue;
    if (!kids.has(i.parent_id)) kids.set(i.parent_id, []);
    kids.get(i.parent_id).push(i);
  }
  const byId = new Map(family.map((i) => [i.id, i]));
  const node = (i) => h('li', {},
    i.id === currentId ? h('strong', {}, `#${i.id}`) : h('a', { href: `#/instance/${i.id}` }, `#${i.id}`),
    ' ', `${i.definition}${i.scope ? ` · ${scopePrefix(i.scope).replace(/\/$/, '')}` : ''}${i.child_index !== null && i.child_index !== undefined ? ` [${i.child_index}]` : ''} `,
    badge(i.status),
    kids.has(i.id) ? h('ul', {}, kids.get(i.id).sort((a, b) => a.id - b.id).map(node)) : '');
  const root = byId.get(rootId);
  if (!root) return h('p', { className: 'muted' }, 'No children.');
  if (!kids.size) return h('p', { className: 'muted' }, 'No children or calls.');
  return h('ul', { className: 'tree' }, node(root));
}

function drawActions(box, result, inst) {
  box.dataset.status = inst.status;
  if (!may('operate')) {
    box.replaceChildren(h('span', { className: 'muted', id: 'read-only' }, 'Read only: your permissions allow no action.'));
    return;
  }
  const act = async (what, body) => {
    try {
      const r = await api(`/instances/${inst.id}/${what}`, { method: 'POST', body });
      flash = `${what.replace(/^events\/.*/, 'emit')}: ${r.status || r.result}`;
      route();
    } catch (err) {
      showError(result, err);
    }
  };
  const parseJson = (text, what) => {
    if (!text.trim()) return null;
    try {
      return JSON.parse(text);
    } catch (err) {
      result.replaceChildren(h('p', { className: 'error' }, `${what} is not JSON: ${err.message}`));
      throw err;
    }
  };
  const items = [];
  const ended = ENDED.has(inst.status);
  if (!ended) {
    items.push(h('button', { id: 'cancel', className: 'danger', onclick: () => {
      if (confirm(`Cancel instance #${inst.id}?`)) act('cancel');
    } }, 'Cancel'));
  }
  if (inst.status === 'failed' && !inst.parent_id) {
    items.push(h('button', { id: 'retry', onclick: () => act('retry') }, 'Retry'));
    const out = h('textarea', { id: 'resume-output', rows: 2, placeholder: 'output JSON, e.g. {"ok":true}' });
    items.push(h('details', { className: 'inline' }, h('summary', { id: 'resume-open' }, 'Resume with an output…'),
      out, h('button', { id: 'resume', onclick: () => {
        // An empty output would be a retry (genroc.resume with NULL): ask for one.
        if (!out.value.trim()) {
          result.replaceChildren(h('p', { className: 'error' }, 'Resume needs an output (JSON); Retry runs the state again.'));
          return;
        }
        let output;
        try {
          output = parseJson(out.value, 'the output');
        } catch {
          return;
        }
        act('resume', { output });
      } }, 'Resume')));
  }
  if (!ended) {
    const name = h('input', { id: 'event-name', placeholder: 'event name' });
    const payload = h('textarea', { id: 'event-payload', rows: 2, placeholder: 'payload JSON (none: null)' });
    items.push(h('details', { className: 'inline' }, h('summary', { id: 'emit-open' }, 'Emit an event…'),
      name, payload, h('button', { id: 'emit', onclick: async () => {
        if (!name.value.trim()) return;
        let body;
        try {
          body = parseJson(payload.value, 'the payload');
        } catch {
          return;
        }
        act(`events/${encodeURIComponent(name.value.trim())}`, body);
      } }, 'Emit')));
  }
  box.replaceChildren(...(items.length ? items : [h('span', { className: 'muted' }, 'No action for a concluded instance.')]));
}

// ---- definitions ----------------------------------------------------------

async function definitionsPage() {
  const mine = generation;
  const r = await api('/definitions');
  if (mine !== generation) return;
  main().replaceChildren(h('h1', {}, 'Definitions'),
    r.definitions.length ? h('table', { className: 'list', id: 'definitions' },
      h('thead', {}, h('tr', {}, ['name', 'versions', 'newest created', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, r.definitions.map((d) => h('tr', {},
        h('td', {}, h('a', { href: `#/definition/${encodeURIComponent(d.name)}` }, d.name)),
        h('td', {}, `1 – ${d.version}`),
        h('td', { title: fmtTime(d.created_at) }, fmtAge(d.created_at)),
        h('td', {}, h('a', { href: `#/instances${query({ definition: d.name })}` }, 'instances')))))) :
      h('p', { className: 'muted' }, 'No definition yet.'));
}

async function definitionPage(name, params) {
  const mine = generation;
  const newest = await api(`/definitions/${encodeURIComponent(name)}`);
  const version = Number(params.get('version')) || newest.version;
  const d = version === newest.version ? newest : await api(`/definitions/${encodeURIComponent(name)}${query({ version })}`);
  if (mine !== generation) return;
  const versions = [];
  for (let v = newest.version; v >= 1; v--) versions.push(v);
  main().replaceChildren(
    h('div', { className: 'titlebar' }, h('h1', {}, name),
      h('label', {}, 'version ', h('select', { id: 'version', onchange: (ev) => go(`/definition/${encodeURIComponent(name)}?version=${ev.target.value}`) },
        versions.map((v) => h('option', { value: v, selected: v === d.version }, `v${v}${v === newest.version ? ' (newest)' : ''}`)))),
      h('a', { href: `#/instances${query({ definition: name })}` }, 'its instances')),
    h('p', { className: 'muted' }, `created ${fmtTime(d.created_at)}`),
    h('section', { className: 'cols' },
      h('div', { className: 'graph-box', id: 'graph' }, drawGraph(d.definition)),
      h('pre', { className: 'source' }, pretty(d.definition))));
}

// ---- workers and queues ---------------------------------------------------

function workersPage() {
  const box = h('div', { id: 'workers' });
  const health = h('p', { className: 'muted', id: 'health' });
  main().replaceChildren(h('div', { className: 'titlebar' }, h('h1', {}, 'Workers'), h('span', { id: 'live-slot' })),
    health, h('div', { id: 'live-error' }), box);
  return live(async (mine) => {
    const [r, hz] = await Promise.all([api('/workers'), fetch('/healthz').then((x) => x.json()).catch(() => null)]);
    if (mine !== generation) return false;
    if (hz) {
      health.replaceChildren(`This server: ${hz.status}, database ${hz.database || '?'}, worker ${hz.worker_id || '—'}, ` +
        `lease age ${hz.lease_age_ms === null ? '— (no worker in this process)' : fmtMs(hz.lease_age_ms)}${hz.manual_tick ? ', manual tick' : ''}`);
    }
    const now = Date.now();
    box.replaceChildren(r.workers.length ? h('table', { className: 'list' },
      h('thead', {}, h('tr', {}, ['worker', 'host', 'live', 'running', 'queues', 'durability', 'last heartbeat', 'lease', 'started', 'stopped']
        .map((c) => h('th', {}, c)))),
      h('tbody', {}, r.workers.map((w) => h('tr', {},
        h('td', {}, w.worker), h('td', {}, w.host || ''),
        h('td', {}, w.live ? badge('live') : badge('gone')),
        h('td', {}, `${w.running} / ${w.concurrency}`),
        h('td', {}, (w.queues || []).join(', ')),
        h('td', {}, w.durability || ''),
        h('td', { title: fmtTime(w.heartbeat_at) }, fmtAge(w.heartbeat_at, now)),
        h('td', {}, `${fmtMs(w.lease_duration_ms)} (stale after ${fmtMs(w.stale_after_ms)})`),
        h('td', { title: fmtTime(w.started_at) }, fmtAge(w.started_at, now)),
        h('td', {}, w.stopped_at ? fmtTime(w.stopped_at) : ''))))) : h('p', { className: 'muted' }, 'No worker has registered.'));
    document.getElementById('live-slot').replaceChildren(stamp());
    return true;
  });
}

function rate(limit, periodMs) {
  return limit === null || limit === undefined ? '—' : `${limit} per ${fmtMs(periodMs)}`;
}

function queuesPage() {
  const box = h('div', { id: 'queues' });
  main().replaceChildren(h('div', { className: 'titlebar' }, h('h1', {}, 'Queues'), h('span', { id: 'live-slot' })),
    h('div', { id: 'live-error' }), box);
  return live(async (mine) => {
    const r = await api('/queues');
    if (mine !== generation) return false;
    box.replaceChildren(r.queues.length ? h('table', { className: 'list' },
      h('thead', {}, h('tr', {}, ['queue', 'kind', 'ready (depth)', 'oldest ready', 'queued', 'running', 'concurrency', 'per partition', 'rate', 'rate per partition', 'workers']
        .map((c) => h('th', {}, c)))),
      h('tbody', {}, r.queues.map((q) => h('tr', {},
        h('td', {}, q.name), h('td', {}, q.kind),
        h('td', {}, String(q.depth)),
        h('td', { title: fmtTime(q.oldest_ready_at) }, q.oldest_ready_at ? fmtAge(q.oldest_ready_at) : '—'),
        h('td', {}, String(q.queued)), h('td', {}, String(q.running)),
        h('td', {}, q.global_concurrency ? String(q.global_concurrency) : 'no limit'),
        h('td', {}, q.partition_concurrency ? String(q.partition_concurrency) : 'no limit'),
        h('td', {}, rate(q.rate_limit, q.rate_period_ms)),
        h('td', {}, rate(q.partition_rate_limit, q.partition_rate_period_ms)),
        h('td', {}, (q.workers || []).join(', ') || '—'))))) : h('p', { className: 'muted' }, 'No queue.'));
    document.getElementById('live-slot').replaceChildren(stamp());
    return true;
  });
}

// ---- the router -----------------------------------------------------------

async function route() {
  generation++;
  clearTimeout(timer);
  const { parts, params } = parseHash();
  for (const a of document.querySelectorAll('[data-nav]')) a.classList.toggle('on', a.dataset.nav === parts[0] || `${a.dataset.nav}` === `${parts[0]}s`);
  if (parts[0] === 'signin') return signinPage();
  if (!who) {
    try {
      who = await api('/whoami');
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        const had = credential();
        setCredential('');
        return signinPage(had ? err.message : '');
      }
      return showError(main(), err);
    }
    renderWho();
  }
  try {
    switch (parts[0]) {
      case 'instance': return await instancePage(Number(parts[1]));
      case 'definitions': return await definitionsPage();
      case 'definition': return await definitionPage(parts[1], params);
      case 'workers': return await workersPage();
      case 'queues': return await queuesPage();
      default: return await instancesPage(params);
    }
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return signedOut();
    showError(main(), err);
  }
}

window.addEventListener('hashchange', route);
route();
