// dom.js — a few helpers to build the page without a framework: h() makes an
// element (text always as text nodes, never as HTML, so data from the API
// cannot inject markup), fmt* format values for people.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'className') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function fmtTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}

// "3 s ago", "4 min ago", from an ISO time and now (ms).
export function fmtAge(iso, now = Date.now()) {
  if (!iso) return '';
  const ms = now - new Date(iso).getTime();
  if (!Number.isFinite(ms)) return '';
  const s = Math.round(ms / 1000);
  if (s < 0) return `in ${fmtSeconds(-s)}`;
  return `${fmtSeconds(s)} ago`;
}

export function fmtSeconds(s) {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return '';
  if (ms < 1000) return `${ms} ms`;
  return fmtSeconds(Math.round(ms / 1000));
}

export function pretty(value) {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

export function badge(status) {
  return h('span', { className: `badge s-${status}` }, status);
}

// Makes `el`'s children look like `kids` (built with h() / svg()) while
// keeping the nodes that match, so a redraw changes only what changed: an
// open <details>, a scrolled <pre>, a ticked box, a focused or half-typed
// input survive it.  Children match by tag and data-key, or, without a key,
// by tag in order.  What the user changes (<details> open, form values) is
// left alone; a kept node keeps its own event listeners, so a node whose
// handler depends on the data carries that data in its data-key.
export function patch(el, ...kids) {
  const next = [];
  append({ append: (n) => next.push(n) }, kids);
  patchChildren(el, next);
}

const USER_OWNED = new Set(['open', 'value', 'checked']);

function keyOf(n) {
  return n.nodeType === 1 ? n.getAttribute('data-key') : null;
}

function same(a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);
}

function patchChildren(el, next) {
  const old = [...el.childNodes];
  const keyed = new Map();
  for (const o of old) if (keyOf(o) !== null) keyed.set(`${o.nodeName}|${keyOf(o)}`, o);
  const used = new Set();
  let cursor = 0; // the next unkeyed old node to try
  const result = next.map((n) => {
    let o = null;
    const k = keyOf(n);
    if (k !== null) {
      o = keyed.get(`${n.nodeName}|${k}`) || null;
    } else {
      while (cursor < old.length && (keyOf(old[cursor]) !== null || used.has(old[cursor]))) cursor++;
      if (cursor < old.length && same(old[cursor], n)) o = old[cursor++];
    }
    if (!o || used.has(o)) return n;
    used.add(o);
    sync(o, n);
    return o;
  });
  result.forEach((n, i) => {
    if (el.childNodes[i] !== n) el.insertBefore(n, el.childNodes[i] || null);
  });
  while (el.childNodes.length > result.length) el.lastChild.remove();
}

function sync(o, n) {
  if (o.nodeType !== 1) {
    if (o.data !== n.data) o.data = n.data;
    return;
  }
  for (const a of [...o.attributes]) {
    if (!n.hasAttribute(a.name) && !USER_OWNED.has(a.name)) o.removeAttribute(a.name);
  }
  for (const a of [...n.attributes]) {
    if (USER_OWNED.has(a.name)) continue;
    if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
  }
  patchChildren(o, [...n.childNodes]);
}
