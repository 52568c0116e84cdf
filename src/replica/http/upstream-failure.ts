/**
 * Upstream failures in nginx's words: the error-log message, `<what> while <phase>`, worded as nginx
 * 1.22 writes it (checked against it by the replica's upstream error-log test), e.g.
 * `connect() failed (111: Connection refused) while connecting to upstream`,
 * `upstream timed out (110: Connection timed out) while reading response header from upstream`,
 * `upstream prematurely closed connection while reading upstream`.
 */
import { constants } from 'node:os';

/** How far the exchange with the upstream got (nginx's log action for each stage). */
export const CONNECTING = 0;
export const SENDING = 1;
export const READING_HEADER = 2;
export const READING_BODY = 3;
export type UpstreamPhase = typeof CONNECTING | typeof SENDING | typeof READING_HEADER | typeof READING_BODY;

const WHILE: readonly string[] = [
  'while connecting to upstream',
  'while sending request to upstream',
  'while reading response header from upstream',
  'while reading upstream',
];

/** The error code of `proxy_send_timeout` passing (the exchange aborts undici's request with it). */
export const UPSTREAM_SEND_TIMEOUT = 'RL_ERR_UPSTREAM_SEND_TIMEOUT';

/**
 * A head the server sent that nginx rejects (`upstream sent invalid header`, `… too big header`):
 * nginx's `invalid_header` case of `proxy_next_upstream`, not `error`, so by default not retried.
 */
export function isInvalidHeader(err: Error & { code?: string }): boolean {
  return err.code === 'UND_ERR_HEADERS_OVERFLOW' || err.name === 'HTTPParserError';
}

/** glibc's strerror() for the errors a proxied connection meets (nginx prints `(errno: text)`). */
const STRERROR: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'Connection refused',
  ECONNRESET: 'Connection reset by peer',
  ECONNABORTED: 'Software caused connection abort',
  ETIMEDOUT: 'Connection timed out',
  EHOSTUNREACH: 'No route to host',
  EHOSTDOWN: 'Host is down',
  ENETUNREACH: 'Network is unreachable',
  ENETDOWN: 'Network is down',
  EPIPE: 'Broken pipe',
  EADDRNOTAVAIL: 'Cannot assign requested address',
};

/** The system call nginx names for each of Node's (upstream reads are recv(), writes writev()). */
const SYSCALL: Readonly<Record<string, string>> = { connect: 'connect', read: 'recv', write: 'writev' };

/** `(110: Connection timed out)` and the like. */
function errnoText(code: string): string {
  const errno = (constants.errno as Record<string, number | undefined>)[code];
  return `(${errno ?? code}: ${STRERROR[code] ?? code})`;
}

/**
 * nginx's error-log message for an error undici (or the send timer) reported at `phase`; `timedOut`
 * when the error is one of the timeouts (the client gets 504 for those, 502 for the rest).
 */
export function upstreamErrorMessage(
  err: Error & { code?: string; syscall?: string },
  phase: UpstreamPhase,
  timedOut: boolean,
): string {
  if (timedOut) return `upstream timed out ${errnoText('ETIMEDOUT')} ${WHILE[phase]}`;
  return `${what(err, phase)} ${WHILE[phase]}`;
}

function what(err: Error & { code?: string; syscall?: string }, phase: UpstreamPhase): string {
  const code = err.code ?? '';
  // undici's "other side closed"; node:http's "socket hang up" (upgrade requests)
  if (code === 'UND_ERR_SOCKET' || (code === 'ECONNRESET' && err.syscall === undefined)) {
    return 'upstream prematurely closed connection';
  }
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return 'upstream sent too big header';
  // llhttp parses only the head and, after it, the chunked framing of the body.
  if (err.name === 'HTTPParserError') {
    return phase === READING_BODY ? 'upstream sent invalid chunked response' : 'upstream sent invalid header';
  }
  if (err.syscall !== undefined) return `${SYSCALL[err.syscall] ?? err.syscall}() failed ${errnoText(code)}`;
  return err.message;
}

/** No server of a group may be tried: each is down, or down and tried (ngx_http_upstream_connect's NGX_BUSY). */
export const NO_LIVE_UPSTREAMS = `no live upstreams ${WHILE[CONNECTING]}`;

/** A request that found no server and no room in the group's queue (Plus's `queue`). */
export const QUEUE_FULL = `upstream queue is full ${WHILE[CONNECTING]}`;

/** A queued request that no server took within the queue's `timeout`. */
export const QUEUE_TIMED_OUT = `upstream timed out in queue ${WHILE[CONNECTING]}`;

/** The warning nginx adds when a failure takes a server of a group out for `fail_timeout`. */
export function serverDisabled(phase: UpstreamPhase): string {
  return `upstream server temporarily disabled ${WHILE[phase]}`;
}
