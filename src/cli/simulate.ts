/**
 * `limitswitch simulate`: JSON-lines request timelines through the engine, one JSON line out per
 * request. `t` is nginx's millisecond clock; keyval lines change a zone as the Plus API would.
 */

import type { Route } from '../engine/http/route.ts';
import type { Site } from '../engine/http/site.ts';
import type { Verdict } from '../engine/http/verdict.ts';
import type { RequestFacts } from '../engine/variables/request-context.ts';
import { LimitswitchError } from '../shared/errors.ts';

export interface SimulatedRequest {
  t: number;
  addr: string;
  host?: string;
  uri: string;
  method?: string;
  port?: number;
  headers?: Record<string, string>;
}

export interface SimulatedKeyval {
  t: number;
  keyval: { zone: string; key: string; value: string | null; expire?: number };
}

export interface SimulatedResult {
  t: number;
  status: string;
  code: number;
  delay_ms: number;
  zone: string | null;
  /** The URI and arguments after a `rewrite` changed them (`proxy_pass` without a URI part sends it). */
  uri?: string;
}

/** A timeline line that is neither a request nor a keyval change (`RL_ERR_SIMULATE_INPUT`). */
function inputError(text: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_SIMULATE_INPUT', text);
}

/** Runs one parsed input line; returns the output line for a request, null for a keyval change. */
export function simulateLine(site: Site, line: unknown, defaultPort: number): SimulatedResult | null {
  if (typeof line !== 'object' || line === null || Array.isArray(line))
    throw inputError('expected a JSON object');
  const input = line as Record<string, unknown>;
  const t = input.t;
  if (typeof t !== 'number' || !Number.isFinite(t)) throw inputError('"t" must be a number (ms)');
  if ('keyval' in input) {
    applyKeyval(site, t, input.keyval);
    return null;
  }
  const { verdict } = decideRequest(site, checkRequest(input, t), defaultPort);
  return simulatedResult(t, verdict);
}

/** simulate's output line for a request decided at `t`. */
export function simulatedResult(t: number, verdict: Verdict): SimulatedResult {
  const delayMs = verdict.kind === 'delay' ? verdict.delayMs : 0;
  const result: SimulatedResult = {
    t,
    status: verdict.status,
    code: verdict.code,
    delay_ms: delayMs,
    zone: verdict.zone,
  };
  const rewritten = verdict.route?.rewritten === undefined ? undefined : verdict.route.target;
  if (rewritten !== undefined) result.uri = rewritten.uri + (rewritten.hasArgs ? `?${rewritten.args}` : '');
  return result;
}

/** What the engine decided for a request, and where it was routed (null: nowhere, a 400). */
export interface SimulatedDecision {
  readonly verdict: Verdict;
  readonly route: Route | null;
}

/**
 * The one decision path of `simulate` and `replay`: a request routed and decided at its `t`. A simulated
 * request takes no time: its limit_conn slots are given back at once.
 */
export function decideRequest(site: Site, request: SimulatedRequest, defaultPort: number): SimulatedDecision {
  const facts = toFacts(request, defaultPort);
  const route = site.routeFacts(facts);
  const verdict = site.decideRoute(route, facts, request.t);
  if (verdict.kind === 'proxy' || verdict.kind === 'wait' || verdict.kind === 'static')
    verdict.connections?.release();
  return { verdict, route };
}

/** A keyval change at `t`, as a timeline's keyval line makes it (same checks, same messages). */
export function simulateKeyval(site: Site, t: number, change: SimulatedKeyval['keyval']): void {
  applyKeyval(site, t, change);
}

function checkRequest(input: Record<string, unknown>, t: number): SimulatedRequest {
  const { addr, host, uri, method, port, headers } = input;
  if (typeof addr !== 'string' || addr.length === 0) throw inputError('"addr" must be a client address');
  if (typeof uri !== 'string' || uri.length === 0) throw inputError('"uri" must be a request target');
  if (host !== undefined && typeof host !== 'string') throw inputError('"host" must be a string');
  if (method !== undefined && typeof method !== 'string') throw inputError('"method" must be a string');
  if (port !== undefined && (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535)) {
    throw inputError('"port" must be a port number');
  }
  if (headers !== undefined && !isStringRecord(headers)) {
    throw inputError('"headers" must be an object of strings');
  }
  return {
    t,
    addr,
    uri,
    host,
    method,
    port: port as number | undefined,
    headers: headers as Record<string, string>,
  };
}

function toFacts(request: SimulatedRequest, defaultPort: number): RequestFacts {
  const headers: Record<string, string> = {};
  const given = request.headers;
  if (given !== undefined) for (const name in given) headers[name.toLowerCase()] = given[name]!;
  if (request.host !== undefined) headers.host = request.host;
  return {
    method: request.method ?? 'GET',
    scheme: 'http',
    target: request.uri,
    headers,
    remoteAddr: request.addr,
    remotePort: 0,
    serverAddr: '127.0.0.1',
    serverPort: request.port ?? defaultPort,
  };
}

function applyKeyval(site: Site, t: number, change: unknown): void {
  if (!isRecord(change)) throw inputError('"keyval" must be an object');
  const { zone: zoneName, key, value, expire } = change;
  if (typeof zoneName !== 'string') throw inputError('"keyval.zone" must be a string');
  const zone = site.keyvalZones.get(zoneName);
  if (zone === undefined) throw inputError(`unknown keyval zone "${zoneName}"`);
  if (typeof key !== 'string' || !zone.validKey(key)) throw inputError(`invalid key "${String(key)}"`);
  if (value === null) {
    zone.delete(key);
    return;
  }
  if (typeof value !== 'string') throw inputError('"keyval.value" must be a string or null');
  if (expire !== undefined && (typeof expire !== 'number' || !(expire > 0))) {
    throw inputError('"keyval.expire" must be a positive number of ms');
  }
  const ttlMs = (expire as number | undefined) ?? zone.timeoutMs;
  zone.set(key, { value, expireAtMs: ttlMs === null ? null : t + ttlMs });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}
