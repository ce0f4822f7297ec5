// api.js — the console's only way to the server: genroc's HTTP API (/api),
// with the signed-in user's credential (a token or a JWT) as a Bearer header.
//
// The credential lives in sessionStorage: it lasts as long as the tab and is
// never written to a cookie, so no other site can send it.

const KEY = 'genroc.credential';

export class ApiError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.sqlstate = e.sqlstate || '';
  }
}

export function credential() {
  return sessionStorage.getItem(KEY) || '';
}

export function setCredential(value) {
  if (value) sessionStorage.setItem(KEY, value);
  else sessionStorage.removeItem(KEY);
}

// One API call: `path` under /api, an optional JSON body (POST).  Resolves
// with the answer's JSON, rejects with an ApiError carrying the SQLSTATE.
export async function api(path, { method = 'GET', body, token } = {}) {
  const headers = { Accept: 'application/json' };
  const cred = token ?? credential();
  if (cred) headers.Authorization = `Bearer ${cred}`;
  const init = { method, headers };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  } else if (method !== 'GET') {
    headers['Content-Type'] = 'application/json';
    init.body = '{}';
  }
  const res = await fetch(`/api${path}`, init);
  let json = null;
  try {
    json = await res.json();
  } catch {
    json = null;
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

// A query string from an object, leaving out empty values; arrays repeat.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}
