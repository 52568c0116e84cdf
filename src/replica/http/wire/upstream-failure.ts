/**
 * What can go wrong between the proxy and a server, as one type (`UpstreamFailure`, by `kind`), and
 * how nginx words it in its error log: the error-log message, `<what> while <phase>`, worded as nginx
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
/** The TLS handshake of an `https://` upstream's connection (nothing of the request went out). */
export const SSL_HANDSHAKING = 4;
export type UpstreamPhase =
  | typeof CONNECTING
  | typeof SENDING
  | typeof READING_HEADER
  | typeof READING_BODY
  | typeof SSL_HANDSHAKING;

const WHILE: readonly string[] = [
  'while connecting to upstream',
  'while sending request to upstream',
  'while reading response header from upstream',
  'while reading upstream',
  'while SSL handshaking to upstream',
];

/** Whether the request had gone out, in part at least, when the failure came at `phase`. */
export function requestWentOut(phase: UpstreamPhase): boolean {
  return phase !== CONNECTING && phase !== SSL_HANDSHAKING;
}

/** What a failure means for the request: the forwarder decides from it alone (forwarder.ts). */
export type UpstreamFailureKind =
  /** A system call on the connection failed (`connect`, `read`, `write`): `code` is the OS's. */
  | 'system'
  /** The server closed the connection before the answer was whole. */
  | 'closed'
  /** A response head longer than the proxy reads (nginx: `upstream sent too big header`). */
  | 'too-big-header'
  /** A head, or a chunked framing, the proxy will not relay: `code` is llhttp's `HPE_…`. */
  | 'invalid-response'
  /** No connection within `proxy_connect_timeout`. */
  | 'connect-timeout'
  /** The TLS handshake failed (the message is nginx's words for it: upstream-tls.ts). */
  | 'handshake'
  /** The TLS handshake was not over within `proxy_connect_timeout`. */
  | 'handshake-timeout'
  /** No response head within `proxy_read_timeout` (for a tunnel: nothing at all). */
  | 'read-timeout'
  /** No piece of the body within `proxy_read_timeout` of the last. */
  | 'body-timeout'
  /** `proxy_send_timeout` passed with the server accepting nothing of the request. */
  | 'send-timeout'
  /** The exchange gave the request up (its client left, or it was refused). */
  | 'aborted'
  /** The connection was closed by the proxy (its group was closed) with the request on it. */
  | 'destroyed'
  /** The request cannot go out as it is (a request target with a space, after a rewrite). */
  | 'unsendable';

export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
  readonly kind: UpstreamFailureKind;
  /** The OS's code of a `system` failure (`ECONNREFUSED`, …), llhttp's of an `invalid-response`; else `""`. */
  readonly code: string;
  /** The system call of a `system` failure. */
  readonly syscall: string | undefined;

  constructor(kind: UpstreamFailureKind, message: string = kind, code = '', syscall?: string) {
    super(message);
    this.kind = kind;
    this.code = code;
    this.syscall = syscall;
  }

  /** One of the timeouts: nginx answers 504 for these (502 for the rest). */
  get timedOut(): boolean {
    return (
      this.kind === 'connect-timeout' ||
      this.kind === 'handshake-timeout' ||
      this.kind === 'read-timeout' ||
      this.kind === 'body-timeout' ||
      this.kind === 'send-timeout'
    );
  }

  /** Nothing of the request reached the server (its log says `while connecting to upstream`). */
  get beforeConnected(): boolean {
    return this.kind === 'connect-timeout' || (this.kind === 'system' && UNREACHED.has(this.code));
  }

  /** It came while the connection's TLS handshake went on (`while SSL handshaking to upstream`). */
  get duringHandshake(): boolean {
    return this.kind === 'handshake' || this.kind === 'handshake-timeout';
  }

  /**
   * A head nginx rejects (`upstream sent invalid header`, `… too big header`): nginx's `invalid_header`
   * case of `proxy_next_upstream`, not `error`, so by default not retried.
   */
  get invalidHeader(): boolean {
    return this.kind === 'too-big-header' || this.kind === 'invalid-response';
  }
}

/** System errors of a connection that never reached the server. */
const UNREACHED: ReadonlySet<string> = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * Any error met on the way to a server, as an `UpstreamFailure`: the proxy's own pass as they are; an
 * error of Node's sockets keeps its code and system call; node:http's "socket hang up" (a connection
 * closed under an upgrade request) is the server closing it.
 */
export function asUpstreamFailure(err: Error & { code?: string; syscall?: string }): UpstreamFailure {
  if (err instanceof UpstreamFailure) return err;
  if (err.syscall === undefined && err.code === 'ECONNRESET')
    return new UpstreamFailure('closed', err.message);
  return new UpstreamFailure('system', err.message, err.code ?? '', err.syscall);
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
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EAGAIN: 'Resource temporarily unavailable',
};

/** The system call nginx names for each of Node's (upstream reads are recv(), writes writev()). */
const SYSCALL: Readonly<Record<string, string>> = { connect: 'connect', read: 'recv', write: 'writev' };

/** `(110: Connection timed out)` and the like. */
function errnoText(code: string): string {
  const errno = (constants.errno as Record<string, number | undefined>)[code];
  return `(${errno ?? code}: ${STRERROR[code] ?? code})`;
}

/** nginx's error-log message for `failure` met at `phase`. */
export function upstreamErrorMessage(failure: UpstreamFailure, phase: UpstreamPhase): string {
  if (failure.timedOut) return `upstream timed out ${errnoText('ETIMEDOUT')} ${WHILE[phase]}`;
  return `${what(failure, phase)} ${WHILE[phase]}`;
}

function what(failure: UpstreamFailure, phase: UpstreamPhase): string {
  switch (failure.kind) {
    case 'closed':
      return 'upstream prematurely closed connection';
    case 'too-big-header':
      return 'upstream sent too big header';
    // the proxy parses only the head and, after it, the chunked framing of the body
    case 'invalid-response':
      return phase === READING_BODY
        ? 'upstream sent invalid chunked response'
        : 'upstream sent invalid header';
    case 'system':
      if (failure.syscall !== undefined)
        return `${SYSCALL[failure.syscall] ?? failure.syscall}() failed ${errnoText(failure.code)}`;
      return failure.message;
    default:
      return failure.message;
  }
}

/** What makes ngx_event_connect_peer's line `error` rather than `crit`: the server only away. */
const AWAY: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  // Linux's answer for a UNIX-domain socket whose listen queue is full
  'EAGAIN',
  'ECONNRESET',
  'ENETDOWN',
  'ENETUNREACH',
  'EHOSTDOWN',
  'EHOSTUNREACH',
]);

/**
 * ngx_event_connect_peer's line for a connect() that failed at once, as a UNIX-domain socket's does
 * (a TCP one fails later: `connect() failed …`): the address named, and `crit` unless the server is
 * only away; null for any other failure.
 */
export function immediateConnectFailure(
  failure: UpstreamFailure,
  address: string,
): { readonly level: 'error' | 'crit'; readonly message: string } | null {
  if (failure.kind !== 'system' || failure.syscall !== 'connect') return null;
  return {
    level: AWAY.has(failure.code) ? 'error' : 'crit',
    message: `connect() to ${address} failed ${errnoText(failure.code)} ${WHILE[CONNECTING]}`,
  };
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
