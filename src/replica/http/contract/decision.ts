/**
 * The one narrow hook between the HTTP data path and the limiting engine.
 *
 * For every request the proxy resolves the client address, then calls `decide(ctx)` synchronously and
 * acts on the answer. The hook must be cheap: compute it from a precomputed route table, and return
 * shared constant objects where the answer does not vary (e.g. one frozen `{ action: 'pass' }`), so the
 * common path allocates nothing.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { AnswerHeaders } from '../../../engine/http/add-headers.ts';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { BoundProxyHeaders } from '../../../engine/http/proxy-headers.ts';
import type { ProxyRules } from '../../../engine/http/proxy-rules.ts';
import type { ClientConnection } from './client-connection.ts';
import type { ProgressRecord } from './request-progress.ts';
import type { UpstreamTls } from './upstream-tls.ts';

/**
 * A request's head as the hook and the logs read it: node:http's `IncomingMessage`, an HTTP/2
 * stream's (h2-request.ts) or one the replica read itself (own-request.ts).
 */
export interface ClientRequestHead {
  readonly method?: string | undefined;
  /** The request-target as sent (an absolute-form one: its path form). */
  readonly url?: string | undefined;
  /** An absolute-form target's host, which stands for the Host header (`$host`, server selection). */
  readonly requestLineHost?: string;
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** `[name, value, …]` in the order received. */
  readonly rawHeaders: string[];
  /** Lower-cased names, duplicates folded as node:http folds them (computed when first read). */
  readonly headers: IncomingHttpHeaders;
  readonly socket: Socket;
  /** Came on an HTTP/2 stream (absent: an HTTP/1 request, whatever its version line says). */
  readonly h2?: true;
}

/**
 * The downstream (client) side of one exchange, as the hook sees it. Valid until the response ends; do not
 * keep it longer.
 */
export interface DownstreamRequest {
  /** The raw request: `method`, `url` (the request-target as sent), `rawHeaders`, `headers` (lazy). */
  readonly req: ClientRequestHead;
  /** `$remote_addr`: the peer, or the address taken from `real_ip_header` when the peer is trusted. */
  remoteAddr: string;
  /** `$remote_port`; 0 when the real-ip header carried no port (nginx then prints it empty). */
  remotePort: number;
  /** `$realip_remote_addr`: the socket peer (IPv4-mapped IPv6 normalised to IPv4). */
  readonly realipRemoteAddr: string;
  /** `$realip_remote_port`. */
  readonly realipRemotePort: number;
  /** The `Host` header as received (`""` when absent). */
  readonly host: string;
  /** The `Content-Length` header's value; -1 when absent (no body, or a chunked one). */
  readonly contentLength: number;
  /**
   * The client connection. Not `req.socket`, which undici clears once it has sent a request body
   * (then the response's is used); null only for a pipelined request whose response waits its turn.
   */
  readonly clientSocket: Socket | null;
  /** The client connection, as the listener knows it (its TLS facts, its `*N`). */
  readonly connection: ClientConnection;
  /** What the data path learns of it after the decision (the servers tried, the answer's status). */
  readonly progress?: ProgressRecord;
}

/**
 * What a request holds until it ends (its limit_conn slots, its place in an API limiter): given back
 * exactly once, then, with the status the client got (`$status`: 499 when it left first).
 */
export interface HeldUntilEnd {
  release(status?: number): void;
}

/** Both held things as one (either may be absent), released together. */
export function heldTogether(first: HeldUntilEnd | null, second: HeldUntilEnd | null): HeldUntilEnd | null {
  if (first === null || second === null) return first ?? second;
  return {
    release: (status?: number) => {
      first.release(status);
      second.release(status);
    },
  };
}

/**
 * Where to forward. `upstream` names an upstream group known to the proxy (see `UpstreamSet`); absent
 * means the listener's default upstream. `path` replaces the request-target sent upstream (what
 * `proxy_pass http://backend/uri` rewriting produces); absent means `req.url` unchanged.
 */
/** The client connection's timers of the request's location; absent: the address's default server's. */
export interface AnsweredUnder {
  readonly client?: ClientTimers;
  /**
   * The `add_header` lines the request is answered under, bound to it (null: none); absent: those of
   * the decision before it (a wait's, for the answer it settles on).
   */
  readonly answerHeaders?: AnswerHeaders | null;
}

export interface ProxyTarget extends AnsweredUnder {
  readonly upstream?: string;
  /** A `proxy_pass` with variables that came to an IP address: that server, in a group of its own. */
  readonly address?: { readonly host: string; readonly port: number } | undefined;
  readonly path?: string;
  /** `proxy_read_timeout` for this request (waiting for the head, then between body reads); absent: the pool's. */
  readonly readTimeoutMs?: number;
  /** `proxy_connect_timeout`: establishing a connection to the server; absent: the upstream options'. */
  readonly connectTimeoutMs?: number;
  /** `proxy_pass https://…`: TLS to the servers, as the location's `proxy_ssl_*` make it; absent: plain. */
  readonly tls?: UpstreamTls;
  /** `proxy_next_upstream*`, `proxy_pass_request_*`; absent: nginx's defaults. */
  readonly proxyRules?: ProxyRules;
  /** The `proxy_set_header` set in force, bound to the request; absent: nginx's defaults. */
  readonly proxyHeaders?: BoundProxyHeaders;
  /**
   * `proxy_send_timeout`: how long the server may accept nothing more of the request body (a client
   * that is slow to send its body is not the server's fault); absent: the upstream options'.
   */
  readonly sendTimeoutMs?: number;
  /**
   * `client_max_body_size` for a body without `Content-Length` (chunked), counted as it is forwarded:
   * past it the upstream request is abandoned (not the server's fault) and the client gets 413. A
   * declared length over the limit is refused before forwarding (the hook's `refuse`). Absent or 0:
   * no limit.
   */
  readonly maxBodyBytes?: number;
  /**
   * Given back when the exchange is over: answered, cut, or its client gone; for a tunnel, when the
   * tunnel closes.
   */
  readonly slots?: HeldUntilEnd | null;
  /** Header fields added to the upstream's answer (name, value, …): the RateLimit fields. */
  readonly responseHeaders?: readonly string[];
  /**
   * `error_page` for a status the upstream finalizes the request with (its 502 or 504; an answer
   * `proxy_intercept_errors` intercepts): what the page makes of the request, or null when none is in
   * force. Absent: the location has no `error_page`.
   */
  readonly errorPage?: (status: number) => Decision | null;
  /** r->err_status: the request is an error page's, its answer relayed under the error's status. */
  readonly errStatus?: number;
}

/** What of a forwarded decision its server's answer is relayed under (responder.ts). */
export type RelayedAnswer = Pick<ProxyTarget, 'responseHeaders' | 'errStatus' | 'proxyRules'>;

/** Forward now, to the default upstream unless the target says otherwise (limits passed or off). */
export interface PassDecision extends ProxyTarget {
  readonly action: 'pass';
}

/** Forward now to a named upstream. */
export interface ProxyDecision extends ProxyTarget {
  readonly action: 'proxy';
  readonly upstream: string;
}

/**
 * `limit_req` delayed the request: hold it `delayMs`, then forward. A client that disconnects while
 * held is released at once and reported through `onClientClosed` (nginx logs 499).
 */
export interface DelayDecision extends ProxyTarget {
  readonly action: 'delay';
  readonly delayMs: number;
  /**
   * The phases after the delay (limit_conn, access), run when it is over: what to do then — forward
   * (holding what it holds) or answer. Absent: forward to this decision's target.
   */
  readonly resume?: () => Decision;
}

/**
 * Wait for admission (a limiter that queues instead of refusing): `wait` parks the request and calls
 * `settle` exactly once with what to do then — forward, or answer (a rejection when the wait ran out).
 * The function it returns withdraws the request, if it is still waiting, when its client goes away
 * (reported through `onClientClosed`, phase `delay`, as for a held request).
 */
export interface WaitDecision {
  readonly action: 'wait';
  wait(settle: (next: Decision) => void): () => void;
}

/**
 * `limit_req` rejected the request: answer `code` (`limit_req_status`, 400..599) with nginx's page for
 * it, or close the connection without a response when `code` is 444.
 */
export interface RejectDecision extends AnsweredUnder {
  readonly action: 'reject';
  readonly code: number;
  /** Seconds for `Retry-After` (the `limit_req_retry_after` extension); absent sends none. */
  readonly retryAfterS?: number;
  /** More header fields of the page (name, value, …): the RateLimit fields. */
  readonly headers?: readonly string[];
}

/**
 * nginx `return code [text]`: answer directly. Without `body`, 4xx/5xx/3xx codes get nginx's page for
 * the code (as `return 404;` does); `headers` are added as given (e.g. `location` for redirects). A
 * `body` without a `content-type` header is sent as `text/plain` (nginx's `default_type`).
 */
export interface ReturnDecision extends AnsweredUnder {
  readonly action: 'return';
  readonly code: number;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * An answer from disk (the static module's, after its filters: http/static/): `headers` after
 * `Server`, and the body read from the open file `fd` — pieces of text and `[start, end)` ranges of
 * it — or none (`body` null, `fd` already closed: a HEAD, a 304). The file is closed once sent.
 */
export interface FileDecision extends AnsweredUnder {
  readonly action: 'file';
  readonly status: number;
  readonly headers: readonly string[];
  readonly fd: number;
  readonly body: readonly BodyPiece[] | null;
}

/** A piece of a file answer's body: text, or `[start, end)` of the file. */
export type BodyPiece = string | { readonly start: number; readonly end: number };

/**
 * nginx refuses what the client sent, before any limit sees it: a head it does not read (a second or
 * invalid Host, too large, a bad version: 400, 414, 494, 505, …) or a body over
 * `client_max_body_size` (413). nginx's page for the code, nothing upstream (no server is tried, so
 * none can be blamed), no `100 Continue`; the connection closes after the page, lingering: what the
 * client still sends is read and dropped until it closes, so the page is not lost to a reset.
 */
export interface RefuseDecision {
  readonly action: 'refuse';
  readonly code: number;
  /** A body over `client_max_body_size` is refused under its location's `add_header` lines. */
  readonly answerHeaders?: AnswerHeaders | null;
}

export type Decision =
  | PassDecision
  | ProxyDecision
  | DelayDecision
  | WaitDecision
  | RejectDecision
  | ReturnDecision
  | FileDecision
  | RefuseDecision;

/** An error-log entry about what a client did (nginx's level and words). */
export interface ClientFault {
  readonly level: 'info' | 'error';
  readonly message: string;
}

/** A request head node:http's parser gave up on (no request object exists for it). */
export interface UnreadableHead {
  /** The parser's error code: `HPE_HEADER_OVERFLOW`, `HPE_INVALID_VERSION`, … */
  readonly code: string;
  /** The read the parser failed in (node's `rawPacket`), as latin1 text. */
  readonly bytes: string;
  /** The client connection (addresses, for the log). */
  readonly socket: Socket;
}

/**
 * What the listener asks the configuration about client input besides the decision (the hook's
 * optional `client`); without it: node:http's defaults for heads, no log lines about clients.
 */
export interface ClientInputRules<D extends Decision = Decision> {
  /** What nginx finds too large in an HTTP/2 header block on this connection (its log line's words), or null. */
  h2HeaderBlockFault?(rawHeaders: readonly string[], socket: Socket): string | null;
  /**
   * node:http's `maxHeaderSize` for connections accepted from now on: at least the largest head nginx
   * would read (its header buffers), so that nginx's own limits decide, in the hook.
   */
  maxHeaderBytes(): number;
  /** The status nginx answers for a head the parser refused (408: closes without one); logs it. */
  unreadableHead(head: UnreadableHead): number;
  /** Logs a client fault met while the request was forwarded (a chunked body past the limit, …). */
  clientFault(ctx: DownstreamRequest, decision: D, fault: ClientFault): void;
}

/**
 * Called once per request, synchronously, before anything is sent upstream. Must not throw. It may
 * carry `client`, the rules for client input (see `ClientInputRules`).
 */
export type DecideHook<D extends Decision = Decision> = ((ctx: DownstreamRequest) => D) & {
  readonly client?: ClientInputRules<D>;
};

/** The shared answer for "limits passed": one object, no allocation per request. */
export const PASS: PassDecision = Object.freeze({ action: 'pass' });
