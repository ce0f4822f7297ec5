// graph.js — an ASL definition drawn as a graph: dagre (a well-kept layered
// layout library) places the states, this file turns its answer into SVG.
//
// Parallel and Map states are nested groups (dagre's compound nodes): the
// state itself opens the group, each Parallel branch is a group inside it, a
// Map's item processor runs inside its group, and a "join" node closes it,
// where the state's own Next, Catch and End leave from.  Edges join states
// only (never groups), which dagre lays out reliably.
//
// Marks (drawGraph's `marks`): each state's last outcome and the edges
// taken, by node id (the state's name after its scope prefix, "Fan/0/Stock"),
// from the instance's history and its children's.
import dagre from '@dagrejs/dagre';
import { svg } from './dom.js';

const CHAR_W = 7.4; // px per character of the 12.5px node font, roughly

function nodeSize(name, type) {
  const longest = Math.max(name.length, type.length * 0.85);
  return { width: Math.max(90, Math.ceil(longest * CHAR_W) + 28), height: 38 };
}

// The node prefix of the sub-machine a child instance runs, from its
// `scope` (the JSON path of that machine in the definition): null is the top
// machine (""), "/States/Fan/Branches/0" is "Fan/0/", "/States/Each/ItemProcessor"
// is "Each/", and nested scopes chain ("Fan/0/Inner/1/").
export function scopePrefix(scope) {
  if (!scope) return '';
  const parts = scope.split('/').filter(Boolean);
  let prefix = '';
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === 'States' && i + 1 < parts.length) {
      prefix += `${parts[++i]}/`;
    } else if (parts[i] === 'Branches' && i + 1 < parts.length) {
      prefix += `${parts[++i]}/`;
    }
  }
  return prefix;
}

// The layout graph of a definition (not yet laid out).
export function buildGraph(definition) {
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
  g.setGraph({ rankdir: 'TB', nodesep: 22, ranksep: 18, edgesep: 12, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  let edgeNo = 0;
  const edge = (from, to, label = {}) => {
    if (!g.hasNode(to)) return; // a dangling Next: compile() refuses those; draw nothing
    const text = label.text || '';
    g.setEdge(from, to, { ...label, width: text ? text.length * 6.4 + 8 : 0, height: text ? 16 : 0, labelpos: 'c' },
      `e${edgeNo++}`);
  };

  // Adds a (sub-)machine; answers its start node and the nodes that end it.
  function machine(m, prefix, parent) {
    const states = (m && m.States) || {};
    const outOf = {}; // state name -> the node its transitions leave from
    for (const [name, st] of Object.entries(states)) {
      const id = prefix + name;
      const type = st.Type || '?';
      g.setNode(id, { kind: 'state', name, type, prefix, ...nodeSize(name, type) });
      outOf[name] = id;
      if (type === 'Parallel' || type === 'Map') {
        const group = `group:${id}`;
        g.setNode(group, { kind: 'group', label: `${type} ${name}` });
        if (parent) g.setParent(group, parent);
        g.setParent(id, group);
        const join = `${id}/join`;
        g.setNode(join, { kind: 'join', name: 'join', width: 44, height: 20 });
        g.setParent(join, group);
        const inner = [];
        if (type === 'Parallel') {
          (st.Branches || []).forEach((b, i) => {
            const sub = `group:${id}/${i}`;
            g.setNode(sub, { kind: 'group', label: `branch ${i + 1}` });
            g.setParent(sub, group);
            inner.push(machine(b, `${id}/${i}/`, sub));
          });
        } else {
          inner.push(machine(st.ItemProcessor || st.Iterator, `${id}/`, group));
        }
        for (const r of inner) {
          if (r.start) edge(id, r.start, { kind: 'fork' });
          for (const end of r.ends) edge(end, join, { kind: 'fork' });
        }
        outOf[name] = join;
      } else if (parent) {
        g.setParent(id, parent);
      }
    }
    const ends = [];
    for (const [name, st] of Object.entries(states)) {
      const from = outOf[name];
      if (st.Next) edge(from, prefix + st.Next);
      if (st.Type === 'Choice') {
        (st.Choices || []).forEach((c, i) => {
          if (c.Next) edge(from, prefix + c.Next, { text: `rule ${i + 1}` });
        });
        if (st.Default) edge(from, prefix + st.Default, { text: 'default' });
      }
      for (const c of st.Catch || []) {
        if (c.Next) edge(from, prefix + c.Next, { kind: 'catch', text: (c.ErrorEquals || []).join(', ') });
      }
      if (st.End || st.Type === 'Succeed' || st.Type === 'Fail') ends.push(from);
    }
    return { start: m && m.StartAt ? prefix + m.StartAt : null, ends };
  }

  g.setNode('__start', { kind: 'terminal', name: 'start', width: 60, height: 26 });
  g.setNode('__end', { kind: 'terminal', name: 'end', width: 60, height: 26 });
  const top = machine(definition, '', null);
  if (top.start) edge('__start', top.start);
  for (const e of top.ends) edge(e, '__end');
  return g;
}

// The node a state's transitions leave from: a Parallel's or Map's "join".
function exitOf(g, id) {
  return g.hasNode(`${id}/join`) ? `${id}/join` : id;
}

// Draws the graph.  `marks`:
//   nodes        Map node id -> {cls: 'ok' | 'failed' | 'caught' | 'current'
//                | 'visited' | 'cancelled', title}: each state's last outcome
//   transitions  [{from, to, caught}] node ids, in the order taken: only
//                these edges are drawn as taken (a Choice's other rules,
//                a Next not followed after a caught error are not)
//   start        the first state's node id (the edge from "start"), or null
//   end          the node id the machine ended from (the edge to "end")
//   selected     the node id whose panel is open
//   onSelect     called with a state's node id when it is clicked
// Answers an <svg> element sized to the layout.
export function drawGraph(definition, marks = {}) {
  const g = buildGraph(definition);
  dagre.layout(g);
  const { width, height } = g.graph();
  const root = svg('svg', {
    class: 'graph',
    viewBox: `0 0 ${Math.ceil(width)} ${Math.ceil(height)}`,
    width: Math.ceil(width),
    height: Math.ceil(height),
    role: 'img',
    'aria-label': 'state machine',
  });
  root.append(svg('defs', {},
    svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))));

  const nodes = marks.nodes || new Map();
  // The edges taken: "from>to" with the catch edges apart (a caught error
  // leaves by its Catch, not by Next, to the same state maybe).
  const taken = new Set();
  for (const t of marks.transitions || []) taken.add(`${exitOf(g, t.from)}>${t.to}>${t.caught ? 'catch' : 'next'}`);
  if (marks.start) taken.add(`__start>${marks.start}>next`);
  if (marks.end) taken.add(`${exitOf(g, marks.end)}>__end>next`);
  const reached = (id) => nodes.has(id);
  const walked = (e, ed) => {
    if (ed.kind === 'fork') {
      // into a branch or the item processor: its first state was reached;
      // out of it to the join: that last state ended well
      if (g.node(e.w).kind === 'join') return (nodes.get(e.v) || {}).cls === 'ok';
      return reached(e.w);
    }
    return taken.has(`${e.v}>${e.w}>${ed.kind === 'catch' ? 'catch' : 'next'}`);
  };

  // Groups first (deepest last, so nested groups draw over their parents).
  const depth = (v) => {
    let d = 0;
    for (let p = g.parent(v); p; p = g.parent(p)) d++;
    return d;
  };
  const groups = g.nodes().filter((v) => g.node(v).kind === 'group').sort((a, b) => depth(a) - depth(b));
  for (const v of groups) {
    const n = g.node(v);
    root.append(svg('g', { class: 'group', 'data-group': v.slice(6) },
      svg('rect', { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height, rx: 8 }),
      // the label sits just above the group's corner: inside, the group's
      // first state would cover it
      svg('text', { x: n.x - n.width / 2 + 2, y: n.y - n.height / 2 - 3, class: 'group-label' }, n.label)));
  }

  for (const e of g.edges()) {
    const ed = g.edge(e);
    const pts = ed.points || [];
    if (!pts.length) continue;
    const d = pts.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
    const k = ['edge', ed.kind || 'next', walked(e, ed) ? 'walked' : ''].filter(Boolean).join(' ');
    const group = svg('g', { class: k, 'data-edge': `${e.v}>${e.w}${ed.text ? `:${ed.text}` : ''}` },
      svg('path', { d, 'marker-end': 'url(#arrow)' }));
    if (ed.text) group.append(svg('text', { x: ed.x, y: ed.y + 4, class: 'edge-label' }, ed.text));
    root.append(group);
  }

  for (const v of g.nodes()) {
    const n = g.node(v);
    if (n.kind === 'group') continue;
    const x = n.x - n.width / 2;
    const y = n.y - n.height / 2;
    if (n.kind === 'state') {
      const m = nodes.get(v);
      const c = ['node', `t-${n.type.toLowerCase()}`, m ? m.cls : '', m && m.cls !== 'visited' ? 'visited' : '',
        marks.selected === v ? 'selected' : ''].filter(Boolean).join(' ');
      const el = svg('g', { class: c, 'data-state': v, tabindex: marks.onSelect ? 0 : undefined },
        svg('rect', { x, y, width: n.width, height: n.height, rx: 6 }),
        svg('text', { x: n.x, y: n.y - 1, class: 'node-name' }, n.name),
        svg('text', { x: n.x, y: n.y + 12, class: 'node-type' }, n.type),
        m && m.title ? svg('title', {}, m.title) : null);
      if (marks.onSelect) {
        el.addEventListener('click', () => marks.onSelect(v));
        el.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') marks.onSelect(v); });
      }
      root.append(el);
    } else {
      root.append(svg('g', { class: `node ${n.kind}` },
        svg('rect', { x, y, width: n.width, height: n.height, rx: n.height / 2 }),
        svg('text', { x: n.x, y: n.y + 4, class: 'node-type' }, n.name)));
    }
  }
  return root;
}
