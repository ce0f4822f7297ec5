// main.js — genroc's web console: a page per hash route, drawn from the HTTP
// API and refreshed by polling (every pollMs(), slower while the tab is
// hidden, never for an instance that has ended).  A refresh patches the page
// (dom.js patch): only what changed is redrawn, so open details, scroll
// positions, selections and half-typed inputs stay.
//
// Routes (the part after #):
//   /signin                     a token or a JWT, when the server runs --auth
//   /instances?status=&definition=&label=&name=&after=&before=&all=&cursors=
//                               the list (top-level instances unless all=1),
//                               newest first, paged by id (keyset); bulk
//                               cancel / retry on a selection or the filter
//   /instance/ID                one instance: graph (path taken, children's
//                               outcomes), a state's panel, data, history,
//                               tree, the actions the API would take
//   /definitions, /definition/NAME?version=N
//   /workers, /queues
import { api, ApiError, credential, query, setCredential } from './api.js';
import { badge, fmtAge, fmtMs, fmtSeconds, fmtTime, h, patch, pretty, svg } from './dom.js';
import { drawGraph, scopePrefix } from './graph.js';
import { lineDiff } from './diff.js';

// The refresh interval: 2 s, or what localStorage "genroc.poll_ms" says
// (at least 100 ms; the browser test uses a short one).
function pollMs() {
  const n = Number(localStorage.getItem('genroc.poll_ms'));
  return Number.isFinite(n) && n >= 100 ? n : 2000;
}
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

// Runs `draw` now and every pollMs() until the next navigation.  `draw`
// answers false to stop polling (a page with nothing live).  <body
// data-polls> counts the refreshes drawn (the browser test waits on it).
function live(draw) {
  const mine = generation;
  const tick = async () => {
    if (mine !== generation) return;
    let again = true;
    try {
      again = (await draw(mine)) !== false;
      if (mine === generation) document.body.dataset.polls = String(Number(document.body.dataset.polls || 0) + 1);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return signedOut();
      const slot = document.getElementById('live-error');
      if (slot) showError(slot, err);
    }
    if (mine === generation && again) timer = setTimeout(tick, document.hidden ? pollMs() * 5 : pollMs());
  };
  return tick();
}

function signedOut() {
  setCredential('');
  who = null;
  go('/signin');
}

function stamp(ended) {
  return ended ? h('span', { className: 'muted', id: 'live-stamp' }, 'ended: not refreshed')
    : h('span', { className: 'live', id: 'live-stamp' }, `live · ${new Date().toLocaleTimeString()}`);
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

// "1.2 s", "3 min 4 s": how long an instance ran (or runs, till now).
function duration(i, now = Date.now()) {
  const from = new Date(i.created_at).getTime();
  const to = i.ended_at ? new Date(i.ended_at).getTime() : now;
  if (!Number.isFinite(from) || !Number.isFinite(to)) return '';
  const ms = Math.max(0, to - from);
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return fmtSeconds(Math.round(ms / 1000));
}

function instancesPage(params) {
  const f = {
    status: params.get('status') || '',
    definition: params.get('definition') || '',
    label: params.get('label') || '',
    name: params.get('name') || '',
    after: params.get('after') || '',
    before: params.get('before') || '',
    all: params.get('all') === '1' ? '1' : '',
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
      name: data.get('name').trim(), after: iso(data.get('after')), before: iso(data.get('before')),
      all: data.get('all') ? '1' : '',
    })}`);
  } },
  h('select', { name: 'status', id: 'f-status' }, h('option', { value: '' }, 'any status'),
    STATUSES.map((s) => h('option', { value: s, selected: s === f.status }, s))),
  defSelect,
  h('input', { name: 'name', id: 'f-name', placeholder: 'name', value: f.name, size: 12 }),
  h('input', { name: 'label', id: 'f-label', placeholder: 'label k:v, k2:v2', value: f.label }),
  h('label', {}, 'created from ', h('input', { type: 'datetime-local', name: 'after', id: 'f-after', value: toLocal(f.after) })),
  h('label', {}, 'to ', h('input', { type: 'datetime-local', name: 'before', id: 'f-before', value: toLocal(f.before) })),
  h('span', { className: 'muted' }, '(UTC)'),
  h('label', { title: 'the children of Parallel and Map states and the instances they call' },
    h('input', { type: 'checkbox', name: 'all', id: 'f-all', checked: f.all === '1' }), ' children too'),
  h('button', { type: 'submit', id: 'apply' }, 'Filter'),
  h('a', { href: '#/instances', className: 'button subtle' }, 'Clear'));

  const selected = new Set(); // instance ids ticked, kept across refreshes
  const bulk = h('div', { className: 'bulk', id: 'bulk' });
  const bulkResult = h('div', { id: 'bulk-result' });
  if (flash) bulkResult.append(h('p', { className: 'ok', role: 'status' }, flash));
  flash = null;
  const table = h('div', { id: 'instances' });
  const pager = h('div', { className: 'pager' });
  main().replaceChildren(h('div', { className: 'titlebar' }, h('h1', {}, 'Instances'), h('span', { id: 'live-slot' })),
    form, h('div', { id: 'live-error' }), bulk, bulkResult, table, pager);

  const labels = f.label.split(',').map((s) => s.trim()).filter(Boolean);
  const filter = () => {
    const out = {};
    if (f.status) out.status = f.status;
    if (f.definition) out.definition = f.definition;
    if (f.name) out.name = f.name;
    if (labels.length) {
      out.label = {};
      for (const l of labels) {
        const at = l.indexOf(':');
        out.label[l.slice(0, at)] = l.slice(at + 1);
      }
    }
    if (f.after) out.created_after = f.after;
    if (f.before) out.created_before = f.before;
    if (!f.all) out.top = true;
    return out;
  };
  const runBulk = async (action, target) => {
    try {
      // the count first (nothing is changed), then the confirmation
      const dry = await api('/instances/bulk', { method: 'POST', body: { action, ...target, dry_run: true } });
      if (!dry.would) {
        bulkResult.replaceChildren(h('p', { className: 'error', id: 'bulk-none' },
          `${action}: none of the ${dry.matched} instance(s) can be ${action === 'cancel' ? 'cancelled' : 'retried'}` +
          (dry.results[0] && dry.results[0].reason ? ` (${dry.results[0].reason})` : '')));
        return;
      }
      const ids = dry.results.filter((r) => r.outcome === 'would').map((r) => r.instance_id);
      const more = dry.more ? ' (the filter matches more: run it again for the rest)' : '';
      if (!confirm(`${action === 'cancel' ? 'Cancel' : 'Retry'} ${ids.length} instance(s)?` +
        `${dry.skipped ? ` ${dry.skipped} skipped (not ${action === 'cancel' ? 'live' : 'failed top-level'}).` : ''}${more}`)) return;
      const r = await api('/instances/bulk', { method: 'POST', body: { action, ids } });
      flash = `${action}: ${r.done} done, ${r.skipped} skipped, ${r.failed} failed`;
      for (const x of r.results) if (x.outcome === 'failed') flash += ` · #${x.instance_id}: ${x.error.message}`;
      selected.clear();
      route();
    } catch (err) {
      showError(bulkResult, err);
    }
  };
  const drawBulk = () => {
    if (!may('operate')) return patch(bulk);
    const n = selected.size;
    const ids = [...selected];
    patch(bulk,
      h('span', { className: 'muted', id: 'selected-count', 'data-key': `n${n}` }, n ? `${n} selected:` : 'Selection:'),
      h('button', { id: 'bulk-cancel', className: 'danger', disabled: !n, 'data-key': `c${ids}`, onclick: () => runBulk('cancel', { ids }) }, 'Cancel'),
      h('button', { id: 'bulk-retry', disabled: !n, 'data-key': `r${ids}`, onclick: () => runBulk('retry', { ids }) }, 'Retry'),
      h('span', { className: 'muted' }, ' · every instance this filter matches:'),
      h('button', { id: 'bulk-cancel-all', className: 'danger subtle', onclick: () => runBulk('cancel', { filter: filter() }) }, 'Cancel all…'),
      h('button', { id: 'bulk-retry-all', className: 'subtle', onclick: () => runBulk('retry', { filter: filter() }) }, 'Retry all…'));
  };
  drawBulk();
  const onTick = (ev) => {
    const id = Number(ev.target.dataset.pick);
    if (!id) return;
    if (ev.target.checked) selected.add(id);
    else selected.delete(id);
    drawBulk();
  };
  table.addEventListener('change', onTick);

  const page = cursors.length ? Number(cursors[cursors.length - 1]) : null;
  const here = (cs) => `/instances${query({ ...f, cursors: cs.join(',') })}`;
  return live(async (mine) => {
    const r = await api(`/instances${query({
      status: f.status, definition: f.definition, name: f.name, label: labels, created_after: f.after,
      created_before: f.before, top: f.all ? '' : 'true', before: page, limit: PAGE, values: 'ref',
    })}`);
    if (mine !== generation) return false;
    const rows = r.instances;
    patch(table, rows.length ? instanceTable(rows, selected) : h('p', { className: 'muted', id: 'empty' }, 'No instance matches.'));
    const older = rows.length === PAGE ? rows[rows.length - 1].id : null;
    patch(pager,
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

function instanceTable(rows, selected) {
  const now = Date.now();
  return h('table', { className: 'list', 'data-key': 'instances' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), ['id', 'name', 'definition', 'status', 'started', 'duration', 'error', 'labels']
      .map((c) => h('th', {}, c)))),
    h('tbody', {}, rows.map((i) => h('tr', { 'data-id': i.id, 'data-key': i.id },
      h('td', {}, h('input', { type: 'checkbox', 'data-pick': i.id, 'aria-label': `select #${i.id}`, checked: selected.has(i.id) })),
      h('td', {}, h('a', { href: `#/instance/${i.id}` }, `#${i.id}`), i.parent_id ? h('span', { className: 'muted' }, ` ↳ #${i.parent_id}`) : ''),
      h('td', { className: 'name' }, i.name || ''),
      h('td', {}, h('a', { href: `#/definition/${encodeURIComponent(i.definition)}?version=${i.version}` }, `${i.definition}@${i.version}`)),
      h('td', {}, badge(i.status)),
      h('td', { title: fmtTime(i.created_at) }, fmtAge(i.created_at, now)),
      h('td', { className: 'duration' }, duration(i, now)),
      h('td', { className: 'err', title: i.cause || '' }, i.error || ''),
      h('td', { className: 'labels' }, labelsText(i.labels))))));
}
// ---- one instance ---------------------------------------------------------

// How sure a mark is, for merging several (children at one state): the
// higher wins.
const RANK = { visited: 0, ok: 1, cancelled: 2, caught: 3, current: 4, failed: 5 };

function mark(nodes, id, cls) {
  const m = nodes.get(id);
  if (!m || RANK[cls] > RANK[m.cls]) nodes.set(id, { ...(m || {}), cls });
}

// The marks one instance's history gives (graph.js drawGraph's `marks`):
// each state entered, how it was left (a transition taken; by a Catch when
// the state had failed), the edge from "start" (top machine only) and how
// the instance stands now.  `prefix` is its machine's node prefix.
function marksFrom(hist, prefix, inst, into, top) {
  let prev = null;
  let failedHere = false;
  for (const e of hist) {
    if (e.event === 'entered' && e.state) {
      const id = prefix + e.state;
      if (prev && prev !== id) {
        into.transitions.push({ from: prev, to: id, caught: failedHere });
        mark(into.nodes, prev, failedHere ? 'caught' : 'ok');
      } else if (!prev && top) {
        into.start = id;
      }
      mark(into.nodes, id, 'visited');
      prev = id;
      failedHere = false;
    } else if (['task_failed', 'children_failed', 'call_failed'].includes(e.event)) {
      failedHere = true;
    } else if (['task_scheduled', 'retried', 'resumed'].includes(e.event)) {
      failedHere = false; // a Retry (or an operator's) runs it again: not caught
    }
  }
  const last = inst.state ? prefix + inst.state : prev;
  if (!last) return;
  if (inst.status === 'succeeded') {
    mark(into.nodes, last, 'ok');
    if (top) into.end = last;
  } else if (inst.status === 'failed') {
    mark(into.nodes, last, 'failed');
  } else if (inst.status === 'cancelled') {
    mark(into.nodes, last, 'cancelled');
  } else {
    mark(into.nodes, last, 'current');
  }
}

// "map, 20: 3 succeeded, 0 failed, 3 running, 14 waiting": as genctl
// instances show prints a fan-out's counts.
function fanoutText(c) {
  const n = (k) => Number(c[k] || 0);
  return `${c.kind}, ${n('total')}: ${n('succeeded')} succeeded, ${n('failed')} failed, ${n('running')} running, ${n('waiting')} waiting`;
}

// The counts as a bar (SVG: the page's policy allows no inline style).
function fanoutBar(c) {
  const total = Math.max(1, Number(c.total || 0));
  const W = 320;
  let x = 0;
  const segs = [];
  for (const [k, cls] of [['succeeded', 'ok'], ['failed', 'failed'], ['running', 'running'], ['waiting', 'waiting']]) {
    const w = (Number(c[k] || 0) / total) * W;
    if (w > 0) segs.push(svg('rect', { x: x.toFixed(1), y: 0, width: w.toFixed(1), height: 12, class: `seg ${cls}`, 'data-n': c[k] },
      svg('title', {}, `${c[k]} ${k}`)));
    x += w;
  }
  return svg('svg', { class: 'bar', id: 'fanout-bar', viewBox: `0 0 ${W} 12`, width: W, height: 12, role: 'img',
    'aria-label': fanoutText(c) }, svg('rect', { x: 0, y: 0, width: W, height: 12, class: 'seg track' }), segs);
}

// How a child is named inside its parent: "item [2]" of a Map, "branch 1"
// of a Parallel, "call" otherwise.
function childName(c) {
  const scope = c.scope || '';
  if (/\/Branches\/\d+$/.test(scope)) return `branch ${Number(scope.split('/').pop()) + 1}`;
  if (c.child_index !== null && c.child_index !== undefined) return `item [${c.child_index}]`;
  return 'call';
}

function instancePage(id) {
  const head = h('div', { className: 'titlebar' }, h('h1', { id: 'title' }, `Instance #${id}`), h('span', { id: 'live-slot' }));
  const actions = h('div', { className: 'actions', id: 'actions' });
  const result = h('div', { id: 'action-result' });
  if (flash) result.append(h('p', { className: 'ok', role: 'status' }, flash));
  flash = null;
  const fanout = h('div', { id: 'fanout' });
  const graph = h('div', { className: 'graph-box', id: 'graph' });
  const legend = h('p', { className: 'legend' });
  const facts = h('div', { className: 'facts', id: 'facts' });
  const data = h('div', { className: 'data', id: 'data' });
  const panel = h('section', { className: 'panel', id: 'state-panel', hidden: true });
  const filterBox = h('input', { id: 'history-filter', placeholder: 'filter: type or step', type: 'search' });
  const history = h('div', { id: 'history' });
  const tree = h('div', { id: 'tree' });
  main().replaceChildren(head, h('div', { id: 'live-error' }), actions, result,
    h('section', { className: 'cols' },
      h('div', {}, h('h2', {}, 'State machine ', h('span', { className: 'muted hint' }, '(click a state)')), fanout, graph, legend),
      h('div', {}, h('h2', {}, 'Instance'), facts, data)),
    panel,
    h('section', { className: 'cols' },
      h('div', {}, h('div', { className: 'titlebar' }, h('h2', {}, 'History'), filterBox), history),
      h('div', {}, h('h2', {}, 'Children and calls'), tree)));

  let defCache = null;
  let selected = null; // the node id whose panel is open
  let drawnGraph = '';
  let drawnActions = '';
  let last = null; // what the last refresh read: {inst, hist, kids, childHist, failedChild}
  const childHist = new Map(); // child id -> {status, hist}: ended children are read once
  let failedChild; // the first failed child (read once the instance ended)

  const select = (node) => {
    selected = selected === node ? null : node;
    if (last) draw(last);
  };
  filterBox.addEventListener('input', () => last && drawHistory(last.hist));

  function drawHistory(hist) {
    const q = filterBox.value.trim().toLowerCase();
    const t0 = hist.length ? new Date(hist[0].at).getTime() : 0;
    patch(history, h('table', { className: 'list events', 'data-key': 'events' },
      h('thead', {}, h('tr', {}, ['id', 'type', 'step', 'started after', 'time', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, hist.map((e) => h('tr', {
        'data-key': e.seq, className: `ev ev-${e.event}`,
        hidden: Boolean(q) && !`${e.event} ${e.state || ''}`.toLowerCase().includes(q),
      },
      h('td', {}, String(e.seq)), h('td', {}, h('strong', {}, e.event)),
      h('td', {}, e.state ? h('button', { className: 'link step', 'data-step': e.state, 'data-key': e.state }, e.state) : ''),
      h('td', {}, `${new Date(e.at).getTime() - t0} ms`),
      h('td', { title: e.at }, fmtTime(e.at)),
      h('td', {}, e.detail && Object.keys(e.detail).length
        ? h('details', {}, h('summary', {}, 'detail'), h('pre', {}, pretty(e.detail))) : ''))))));
  }
  history.addEventListener('click', (ev) => {
    const b = ev.target.closest('[data-step]');
    if (b) select(scopePrefix((last && last.inst.scope) || null) + b.dataset.step);
  });

  function draw(r) {
    const { inst, hist, kids } = r;
    const prefix = scopePrefix(inst.scope);
    const m = { nodes: new Map(), transitions: [], start: null, end: null };
    marksFrom(hist, prefix, inst, m, !inst.scope);
    // inside Parallel and Map: each child's path (its history when read) and outcome
    const here = new Map(); // node id -> counts of children that stopped there
    for (const c of kids) {
      const cp = scopePrefix(c.scope);
      const ch = childHist.get(c.id);
      if (ch) marksFrom(ch.hist, cp, c, m, false);
      else if (c.state) mark(m.nodes, cp + c.state, { succeeded: 'ok', failed: 'failed', cancelled: 'cancelled' }[c.status] || 'current');
      if (c.state) {
        const k = cp + c.state;
        if (!here.has(k)) here.set(k, {});
        here.get(k)[c.status] = (here.get(k)[c.status] || 0) + 1;
      }
    }
    for (const [k, counts] of here) {
      const n = m.nodes.get(k);
      if (n) n.title = `children that stopped here: ${Object.entries(counts).map(([s, x]) => `${x} ${s}`).join(', ')}`;
    }
    const key = JSON.stringify([defCache.key, [...m.nodes], m.transitions, m.start, m.end, selected]);
    if (key !== drawnGraph) {
      drawnGraph = key;
      patch(graph, drawGraph(defCache.def, { ...m, selected, onSelect: select }));
    }
    patch(legend, h('span', { className: 'key k-ok' }, 'succeeded'), h('span', { className: 'key k-current' }, 'running / waiting'),
      h('span', { className: 'key k-failed' }, 'failed'), h('span', { className: 'key k-caught' }, 'failed, caught'),
      h('span', { className: 'key k-walked' }, 'transition taken'),
      h('a', { href: `#/definition/${encodeURIComponent(inst.definition)}?version=${inst.version}` }, `${inst.definition}@${inst.version}`));

    // the last fan-out's counts (genctl's), a bar, and its failed child
    const c = inst.children;
    const fanState = [...hist].reverse().find((e) => e.event === 'children_started');
    patch(fanout, c ? h('div', { className: 'fanout', 'data-key': 'fanout' },
      h('span', { className: 'muted' }, `${fanState && fanState.state ? `${fanState.state}: ` : ''}`),
      h('span', { id: 'fanout-counts' }, fanoutText(c)), fanoutBar(c),
      // a fan-out that is over keeps the counts it ended with (the siblings a
      // failure cancelled count where they were)
      inst.wait_kind !== 'children' ? h('span', { className: 'muted', id: 'fanout-when' }, '(as when it ended)') : '',
      failedChild ? h('p', { className: 'failure', id: 'failed-child', 'data-key': failedChild.id },
        `${childName(failedChild)} failed`, failedChild.state ? ` in ${failedChild.state}` : '', ': ',
        h('span', { className: 'mono' }, failedChild.error || ''), failedChild.cause ? ` — ${failedChild.cause}` : '', ' ',
        h('a', { href: `#/instance/${failedChild.id}`, id: 'failed-child-link' }, `open #${failedChild.id}`)) : '') : '');

    patch(facts, h('dl', {},
      fact('status', badge(inst.status)), fact('state', inst.state || '—'),
      inst.name ? fact('name', inst.name) : '',
      fact('definition', h('a', { href: `#/definition/${encodeURIComponent(inst.definition)}?version=${inst.version}` }, `${inst.definition}@${inst.version}`)),
      fact('queue', inst.queue), fact('attempt', String(inst.attempt)),
      inst.wait_kind ? fact('waiting for', `${inst.wait_kind}${inst.activity ? ` "${inst.activity}"` : ''}${inst.wait_until ? ` until ${fmtTime(inst.wait_until)}` : ''}`) : '',
      inst.lease_owner ? fact('leased to', `${inst.lease_owner} (epoch ${inst.lease_epoch})`) : '',
      inst.parent_id ? fact('parent', h('a', { href: `#/instance/${inst.parent_id}` }, `#${inst.parent_id}`), ` (${childName(inst)})`) : '',
      fact('labels', labelsText(inst.labels) || '—'),
      fact('created', fmtTime(inst.created_at)), fact('updated', fmtTime(inst.updated_at)),
      inst.ended_at ? fact('ended', `${fmtTime(inst.ended_at)} (${duration(inst)})`) : fact('running for', duration(inst))));
    patch(data,
      block('Input', inst.input, 'input'),
      inst.output !== null && inst.output !== undefined ? block('Output', inst.output, 'output') : '',
      inst.error ? h('div', { className: 'failure', id: 'failure' }, h('h3', {}, 'Error'), h('p', { className: 'mono', id: 'error' }, inst.error),
        inst.cause ? [h('h3', {}, 'Cause'), h('pre', { id: 'cause' }, inst.cause)] : '') : '');
    drawPanel(r, prefix);
    drawHistory(hist);
    patch(tree, familyTree(r.family, inst.root_id || inst.id, inst.id, r.partial));
    const akey = JSON.stringify([inst.actions, inst.activity, may('operate')]);
    if (akey !== drawnActions) {
      drawnActions = akey;
      drawActions(actions, result, inst);
    }
  }

  // The panel of the state clicked: what the log says about it.
  function drawPanel(r, prefix) {
    if (!selected) {
      panel.hidden = true;
      return patch(panel);
    }
    panel.hidden = false;
    const close = h('button', { className: 'link close', id: 'panel-close', onclick: () => select(selected) }, 'close');
    if (selected.startsWith(prefix) && !selected.slice(prefix.length).includes('/')) {
      const name = selected.slice(prefix.length);
      return patch(panel, h('div', { className: 'titlebar', 'data-key': `t${selected}` }, h('h2', { id: 'panel-title' }, `State ${name}`), close),
        statePanel(r.hist, name, r.inst, r));
    }
    // a state inside a Parallel or Map: the children that reached it
    const at = r.kids.filter((c) => scopePrefix(c.scope) + (c.state || '') === selected ||
      (childHist.get(c.id) && childHist.get(c.id).hist.some((e) => e.state && scopePrefix(c.scope) + e.state === selected)));
    at.sort((a, b) => (b.status === 'failed') - (a.status === 'failed') || a.id - b.id);
    const first = at[0];
    const ch = first && childHist.get(first.id);
    const cp = first ? scopePrefix(first.scope) : '';
    patch(panel, h('div', { className: 'titlebar', 'data-key': `t${selected}` }, h('h2', { id: 'panel-title' }, `State ${selected}`), close),
      h('p', { className: 'muted', 'data-key': 'reach' }, at.length ? `${at.length} child instance(s) reached it (failed first):` : 'No child instance read here reached it.'),
      h('ul', { className: 'kids', id: 'panel-children', 'data-key': 'kids' }, at.slice(0, 20).map((c) => h('li', { 'data-key': c.id },
        h('a', { href: `#/instance/${c.id}` }, `#${c.id}`), ` ${childName(c)} `, badge(c.status), c.error ? h('span', { className: 'mono err' }, ` ${c.error}`) : ''))),
      first && ch ? [h('h3', { 'data-key': `of${first.id}` }, `In #${first.id} (${childName(first)}):`),
        statePanel(ch.hist, selected.slice(cp.length), first, null)] : '');
  }

  function statePanel(hist, name, inst, r) {
    const evs = hist.filter((e) => e.state === name);
    const entered = hist.filter((e) => e.event === 'entered');
    const lastOf = (type) => [...evs].reverse().find((e) => e.event === type);
    const scheduled = lastOf('task_scheduled');
    const done = lastOf('task_succeeded');
    const failure = [...evs].reverse().find((e) => ['task_failed', 'failed', 'children_failed', 'call_failed'].includes(e.event) && e.detail && e.detail.error);
    const isFirst = entered.length && entered[0].state === name;
    const endedHere = inst.state === name && inst.status === 'succeeded';
    let input = null;
    if (scheduled && 'input' in scheduled.detail) input = ['task input (after InputPath and Parameters)', scheduled.detail.input];
    else if (isFirst) input = ["the instance's input (before InputPath)", (hist.find((e) => e.event === 'started') || { detail: {} }).detail.input];
    let output = null;
    if (done && 'output' in done.detail) output = ['task result (before ResultSelector and ResultPath)', done.detail.output];
    const final = hist.find((e) => e.event === 'succeeded');
    const attempts = evs.filter((e) => e.event === 'task_started' || e.event === 'activity_claimed');
    const retries = evs.filter((e) => e.event === 'task_scheduled' && e.detail.attempt > 0);
    const kids = r && r.kids.length && evs.some((e) => e.event === 'children_started') ? r : null;
    const notLogged = h('p', { className: 'muted' }, 'not in the log (a Task logs its input and result; other states only their entry)');
    return h('div', { className: 'state-panel', 'data-key': `p${name}` },
      h('div', { className: 'cols3' },
        h('div', {}, h('h3', {}, 'Input'), input ? [h('p', { className: 'muted' }, input[0]), h('pre', { id: 'panel-input' }, pretty(input[1]))] : notLogged),
        h('div', {}, h('h3', {}, 'Output'), output ? [h('p', { className: 'muted' }, output[0]), h('pre', { id: 'panel-output' }, pretty(output[1]))] : '',
          endedHere && final ? [h('p', { className: 'muted' }, "the instance's output (after OutputPath)"), h('pre', { id: 'panel-final' }, pretty(final.detail.output))] : '',
          !output && !(endedHere && final) ? notLogged : ''),
        h('div', {}, h('h3', {}, 'Error'), failure ? [h('p', { className: 'mono err', id: 'panel-error' }, failure.detail.error),
          failure.detail.cause ? h('pre', { id: 'panel-cause' }, failure.detail.cause) : ''] : h('p', { className: 'muted' }, 'none'))),
      h('h3', {}, `Attempts (${attempts.length})`, retries.length ? ` · ${retries.length} retr${retries.length === 1 ? 'y' : 'ies'}` : ''),
      attempts.length ? h('table', { className: 'list', id: 'panel-attempts' },
        h('thead', {}, h('tr', {}, ['attempt', 'worker', 'lease epoch', 'started', 'retry delay'].map((c) => h('th', {}, c)))),
        h('tbody', {}, attempts.map((e) => {
          const sch = evs.find((x) => x.event === 'task_scheduled' && x.detail.attempt === e.detail.attempt);
          return h('tr', { 'data-key': e.seq }, h('td', {}, String(e.detail.attempt ?? '')), h('td', { className: 'worker' }, e.detail.worker || ''),
            h('td', {}, String(e.detail.epoch ?? '')), h('td', { title: e.at }, fmtTime(e.at)),
            h('td', {}, sch && sch.detail.delay_ms ? fmtMs(sch.detail.delay_ms) : '—'));
        }))) : h('p', { className: 'muted' }, 'no worker ran it'),
      kids && inst.children ? h('p', {}, `children: ${fanoutText(inst.children)}`) : '',
      h('h3', {}, `Events (${evs.length})`),
      h('ol', { className: 'timeline', id: 'panel-events' }, evs.map((e) => h('li', { className: `ev ev-${e.event}`, 'data-key': e.seq },
        h('time', { title: e.at }, fmtTime(e.at)), ' ', h('strong', {}, e.event),
        e.detail && Object.keys(e.detail).length ? h('details', {}, h('summary', {}, 'detail'), h('pre', {}, pretty(e.detail))) : ''))));
  }

  return live(async (mine) => {
    const inst = await api(`/instances/${id}`);
    const hist = (await api(`/instances/${id}/history`)).history;
    const rootId = inst.root_id || inst.id;
    // root=ID lists the instances below ID; the root itself comes apart
    const family = hist.some((e) => e.event === 'children_started' || e.event === 'call_started') || inst.parent_id
      ? (await api(`/instances${query({ root: rootId, limit: FAMILY_MAX, values: 'ref' })}`)).instances : [];
    const partial = family.length === FAMILY_MAX;
    family.push(rootId === inst.id ? inst : await api(`/instances/${rootId}`));
    const kids = family.filter((c) => c.parent_id === inst.id);
    // the paths inside Parallel and Map: each child's history, up to 20
    // children (a big Map is coloured by where its items stopped)
    if (kids.length <= 20) {
      for (const c of kids) {
        const had = childHist.get(c.id);
        if (had && ENDED.has(had.status)) continue;
        childHist.set(c.id, { status: c.status, hist: (await api(`/instances/${c.id}/history`)).history });
      }
    }
    if (inst.children && inst.children.failed && !failedChild) {
      failedChild = (await api(`/instances${query({ parent: inst.id, status: 'failed', limit: 1, values: 'ref' })}`)).instances[0];
      if (!failedChild && !ENDED.has(inst.status)) failedChild = undefined; // a cancelled one: asked again
    }
    const defKey = `${inst.definition}@${inst.version}`;
    if (!defCache || defCache.key !== defKey) {
      defCache = { key: defKey, def: (await api(`/definitions/${encodeURIComponent(inst.definition)}${query({ version: inst.version })}`)).definition };
    }
    if (mine !== generation) return false;
    last = { inst, hist, kids, family, partial };
    document.getElementById('title').textContent = `Instance #${id}${inst.name ? ` · ${inst.name}` : ''}`;
    draw(last);
    const ended = ENDED.has(inst.status);
    document.getElementById('live-slot').replaceChildren(stamp(ended));
    return !ended; // an ended instance does not change: not polled again
  });
}

function fact(name, ...value) {
  return [h('dt', {}, name), h('dd', {}, ...value)];
}

function block(title, value, id) {
  return h('div', { 'data-key': id }, h('h3', {}, title), h('pre', { id }, pretty(value)));
}

// The tree of the instance's family (its root and every descendant), the
// current one marked; at most TREE_MAX children shown per instance.
const TREE_MAX = 20;
// The family read per refresh: a Map of 100,000 items is shown by its
// counts, its failed child and the newest of its family.
const FAMILY_MAX = 250;
function familyTree(family, rootId, currentId, partial) {
  const kids = new Map();
  for (const i of family) {
    if (!i.parent_id) continue;
    if (!kids.has(i.parent_id)) kids.set(i.parent_id, []);
    kids.get(i.parent_id).push(i);
  }
  const byId = new Map(family.map((i) => [i.id, i]));
  const node = (i) => h('li', { 'data-key': i.id },
    i.id === currentId ? h('strong', {}, `#${i.id}`) : h('a', { href: `#/instance/${i.id}` }, `#${i.id}`),
    ' ', `${i.definition}${i.scope ? ` · ${scopePrefix(i.scope).replace(/\/$/, '')}` : ''}${i.child_index !== null && i.child_index !== undefined ? ` [${i.child_index}]` : ''} `,
    badge(i.status), i.error ? h('span', { className: 'mono err' }, ` ${i.error}`) : '',
    kids.has(i.id) ? h('ul', {}, few(kids.get(i.id)).map(node),
      kids.get(i.id).length > TREE_MAX ? h('li', { className: 'muted', 'data-key': 'more' }, `… and ${kids.get(i.id).length - TREE_MAX}${partial ? '+' : ''} more`) : '') : '');
  // a big Map: its failed children first, then the first ones in order
  const few = (list) => list.sort((a, b) => (b.status === 'failed') - (a.status === 'failed') || a.id - b.id).slice(0, TREE_MAX);
  const root = byId.get(rootId);
  if (!root || !kids.size) return h('p', { className: 'muted', 'data-key': 'none' }, 'No children or calls.');
  return h('ul', { className: 'tree', 'data-key': 'tree' }, node(root));
}

// The actions the API would take for this instance now (its "actions":
// the server's one rule, worker/instance_actions.hpp), for a user allowed
// to operate.
function drawActions(box, result, inst) {
  if (!may('operate')) {
    box.replaceChildren(h('span', { className: 'muted', id: 'read-only' }, 'Read only: your permissions allow no action.'));
    return;
  }
  const can = new Set(inst.actions || []);
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
  if (can.has('cancel')) {
    items.push(h('button', { id: 'cancel', className: 'danger', onclick: () => {
      if (confirm(`Cancel instance #${inst.id}?`)) act('cancel');
    } }, 'Cancel'));
  }
  if (can.has('retry')) items.push(h('button', { id: 'retry', onclick: () => act('retry') }, `Retry ${inst.state || ''}`.trim()));
  // redrive: on from where it stopped; a Map or Parallel reruns only its children that did not succeed
  if (can.has('redrive')) {
    items.push(h('button', { id: 'redrive', title: 'go on from where it stopped; a Map or Parallel reruns only what did not succeed',
      onclick: () => act('redrive') }, 'Redrive'));
  }
  if (can.has('resume')) {
    const out = h('textarea', { id: 'resume-output', rows: 2, placeholder: 'output JSON, e.g. {"ok":true}' });
    items.push(h('details', { className: 'inline' }, h('summary', { id: 'resume-open' }, `Resume after ${inst.state} with an output…`),
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
  if (can.has('emit')) {
    const payload = h('textarea', { id: 'event-payload', rows: 2, placeholder: 'payload JSON (none: null)' });
    items.push(h('details', { className: 'inline' }, h('summary', { id: 'emit-open' }, `Send event "${inst.activity}"…`),
      payload, h('button', { id: 'emit', onclick: async () => {
        let body;
        try {
          body = parseJson(payload.value, 'the payload');
        } catch {
          return;
        }
        act(`events/${encodeURIComponent(inst.activity)}`, body);
      } }, 'Send')));
  }
  box.replaceChildren(...(items.length ? items : [h('span', { className: 'muted', id: 'no-action' },
    inst.parent_id && inst.status === 'failed' ? `No action here: retry its top instance #${inst.root_id}.` : 'No action for this instance.')]));
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

// A definition's text as its author wrote it ("source", when the server
// keeps it), else the stored JSON pretty-printed (its keys then come in
// the database's order).
function sourceText(d) {
  return typeof d.source === 'string' && d.source ? d.source : pretty(d.definition);
}

async function definitionPage(name, params) {
  const mine = generation;
  const path = `/definitions/${encodeURIComponent(name)}`;
  const newest = await api(path);
  const version = Number(params.get('version')) || newest.version;
  const d = version === newest.version ? newest : await api(`${path}${query({ version })}`);
  const against = Number(params.get('diff')) || 0;
  const other = against && against !== d.version ? await api(`${path}${query({ version: against })}`) : null;
  if (mine !== generation) return;
  const versions = [];
  for (let v = newest.version; v >= 1; v--) versions.push(v);
  const here = (p) => `/definition/${encodeURIComponent(name)}${query({ version: d.version, ...p })}`;
  main().replaceChildren(
    h('div', { className: 'titlebar' }, h('h1', {}, name),
      h('label', {}, 'version ', h('select', { id: 'version', onchange: (ev) => go(`/definition/${encodeURIComponent(name)}?version=${ev.target.value}`) },
        versions.map((v) => h('option', { value: v, selected: v === d.version }, `v${v}${v === newest.version ? ' (newest)' : ''}`)))),
      h('label', {}, 'compare with ', h('select', { id: 'diff-with', onchange: (ev) => go(here({ diff: ev.target.value })) },
        h('option', { value: '' }, '—'),
        versions.filter((v) => v !== d.version).map((v) => h('option', { value: v, selected: v === against }, `v${v}`)))),
      h('a', { href: `#/instances${query({ definition: name })}` }, 'its instances')),
    h('p', { className: 'muted' }, `created ${fmtTime(d.created_at)}${typeof d.source === 'string' ? ' · shown as written' : ' · shown as stored (jsonb: keys sorted)'}`),
    may('operate') && d.version === newest.version ? startBox(name) : '',
    other ? diffView(other, d) : h('section', { className: 'cols' },
      h('div', { className: 'graph-box', id: 'graph' }, drawGraph(d.definition)),
      h('div', {}, h('pre', { className: 'source', id: 'source' }, sourceText(d)),
        typeof d.source === 'string' ? h('details', { id: 'stored' }, h('summary', {}, 'as stored (jsonb)'), h('pre', { className: 'source' }, pretty(d.definition))) : '')));
}

// Two versions side by side, the lines that differ marked.
function diffView(a, b) {
  const [old, neu] = a.version < b.version ? [a, b] : [b, a];
  const rows = lineDiff(sourceText(old), sourceText(neu));
  const changed = rows.filter((r) => r[2] !== 'same').length;
  return h('section', { id: 'diff' },
    h('p', { className: 'muted', id: 'diff-summary' }, `v${old.version} → v${neu.version}: ${changed} line(s) differ`),
    h('table', { className: 'diff' },
      h('thead', {}, h('tr', {}, h('th', {}, `v${old.version}`), h('th', {}, `v${neu.version}`))),
      h('tbody', {}, rows.map(([l, r, kind]) => h('tr', { className: `d-${kind}` },
        h('td', { className: 'mono' }, l ?? ''), h('td', { className: 'mono' }, r ?? ''))))),
    h('section', { className: 'cols' },
      h('div', { className: 'graph-box' }, drawGraph(old.definition)), h('div', { className: 'graph-box' }, drawGraph(neu.definition))));
}

// "Start execution": an input checked as JSON before it is sent, a name.
function startBox(name) {
  const input = h('textarea', { id: 'start-input', rows: 4, spellcheck: 'false' }, '{}');
  const runName = h('input', { id: 'start-name', placeholder: 'execution name (optional)' });
  const check = h('span', { id: 'start-check', className: 'muted' }, 'valid JSON');
  const out = h('div', { id: 'start-result' });
  const button = h('button', { id: 'start', type: 'button' }, 'Start');
  const validate = () => {
    try {
      JSON.parse(input.value);
      check.textContent = 'valid JSON';
      check.className = 'muted';
      button.disabled = false;
      return true;
    } catch (err) {
      check.textContent = `not JSON: ${err.message}`;
      check.className = 'bad';
      button.disabled = true;
      return false;
    }
  };
  input.addEventListener('input', validate);
  button.addEventListener('click', async () => {
    if (!validate()) return;
    const options = runName.value.trim() ? { name: runName.value.trim() } : undefined;
    try {
      const r = await api('/instances', { method: 'POST', body: { definition: name, input: JSON.parse(input.value), options } });
      flash = `started: ${r.status}`;
      go(`/instance/${r.instance_id}`);
    } catch (err) {
      showError(out, err);
    }
  });
  return h('details', { className: 'start', id: 'start-box' }, h('summary', { id: 'start-open' }, 'Start execution…'),
    h('label', { for: 'start-input' }, 'Input (JSON)'), input, check, runName, button, out);
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
    patch(box, r.workers.length ? h('table', { className: 'list' },
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
    patch(box, r.queues.length ? h('table', { className: 'list' },
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
