// diff.js — a line diff of two texts (a definition's versions side by side):
// the longest common subsequence of their lines, answered as rows of
// [left line or null, right line or null, kind] where kind is 'same',
// 'del' (left only), 'add' (right only) or 'chg' (a line replaced).

const MAX_CELLS = 4e6; // lines x lines past which the table would be too big: every line differs

export function lineDiff(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  const n = x.length;
  const m = y.length;
  if (n * m > MAX_CELLS) return x.map((l, i) => [l, y[i] ?? null, l === y[i] ? 'same' : 'chg']).concat(y.slice(n).map((l) => [null, l, 'add']));
  // lcs[i][j]: the common lines of x[i..] and y[j..], in one typed array
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const rows = [];
  let i = 0;
  let j = 0;
  let dels = [];
  let adds = [];
  const flush = () => {
    // a run of removed lines next to a run of added ones: replaced lines
    const k = Math.min(dels.length, adds.length);
    for (let t = 0; t < k; t++) rows.push([dels[t], adds[t], 'chg']);
    for (const l of dels.slice(k)) rows.push([l, null, 'del']);
    for (const l of adds.slice(k)) rows.push([null, l, 'add']);
    dels = [];
    adds = [];
  };
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      flush();
      rows.push([x[i], y[j], 'same']);
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
      adds.push(y[j++]);
    } else {
      dels.push(x[i++]);
    }
  }
  flush();
  return rows;
}
