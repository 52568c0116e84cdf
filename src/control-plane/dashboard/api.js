/**
 * The page's one way to the control plane: the API it documents, nothing else. The token the operator
 * types is kept for this tab only (sessionStorage) and sent as `Authorization: Bearer` on every call,
 * so reads behind `--read-auth` work too. Errors carry NGINX's error text.
 */

const TOKEN_KEY = 'limitswitch.token';

export class ApiError extends Error {
  constructor(status, code, text) {
    super(text);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, value);
}

/** How far the control plane's clock is ahead of this browser's, from the last answer's `Date`. */
let serverOffsetMs = 0;

/** Now, on the control plane's clock (second resolution): heartbeat ages are measured with it. */
export function serverNowMs() {
  return Date.now() + serverOffsetMs;
}

async function call(method, path, { body, headers = {} } = {}) {
  const all = { ...headers };
  if (token() !== '') all.authorization = `Bearer ${token()}`;
  if (body !== undefined) all['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers: all,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const date = Date.parse(response.headers.get('date') ?? '');
  if (!Number.isNaN(date)) serverOffsetMs = date - Date.now();
  if (response.ok) return response;
  let code = 'HttpError';
  let text = `${method} ${path}: ${response.status}`;
  try {
    const error = (await response.json()).error;
    code = error.code;
    text = error.text;
  } catch {
    // Not an NGINX error body: keep the status line.
  }
  throw new ApiError(response.status, code, text);
}

export async function getJson(path) {
  return (await call('GET', path)).json();
}

/**
 * Set (`value` a string) or delete (`null`) one key, and wait until every live replica applied it:
 * PATCH for a key that exists, POST for a new one, `expire` when a TTL is given. Resolves with the
 * revision written and, when some replica had not applied it in time (202), the laggards.
 */
export async function writeSwitch({ zone, key, value, exists, expireMs, reason, waitS = 10 }) {
  const entry = value === null || expireMs === null ? value : { value, expire: expireMs };
  const path = `/api/9/http/keyvals/${encodeURIComponent(zone)}?wait=applied&timeout=${waitS}s`;
  const headers = reason ? { 'x-limitswitch-reason': reason } : {};
  const response = await call(exists ? 'PATCH' : 'POST', path, { body: { [key]: entry }, headers });
  const revision = Number(response.headers.get('x-limitswitch-revision'));
  const report = response.status === 202 ? await response.json() : null;
  return { revision, laggards: report?.laggards ?? [] };
}
