/**
 * What a listener (proxy-server.ts) is made from: the limiting hook and its upgrade question, the
 * upstream groups, realip, the client connection timers, the TLS/h2 edge, and the callbacks its access
 * and error logs and metrics hear.
 */
import type { Socket } from 'node:net';
import type { RealIpConf } from '../../config/model.ts';
import type { ClientTimers } from '../../engine/http/client-timers.ts';
import type { DecideHook, Decision, DownstreamRequest } from './contract/decision.ts';
import type {
  ClientClosedCallback,
  CompletedCallback,
  UpstreamErrorCallback,
} from './contract/exchange-events.ts';
import type { EdgeConf } from './edge/edge-listener.ts';
import type { UpstreamLookup } from './upstream/upstream-group.ts';

export interface ProxyServerOptions<D extends Decision = Decision> {
  /** The limiting hook, called once per request. */
  readonly decide: DecideHook<D>;
  /**
   * Whether the request's location tunnels protocol upgrades (nginx: `proxy_http_version 1.1` with
   * `proxy_set_header Upgrade`/`Connection`). Called before `decide`, for upgrade requests only.
   * Absent: no location does, and upgrade requests are forwarded as plain ones.
   */
  readonly canUpgrade?: (ctx: DownstreamRequest) => boolean;
  /** Every upstream group a decision may name. The owner closes them after `close()`. */
  readonly upstreams: UpstreamLookup;
  /** The group for `pass`/`delay` decisions that name none. */
  readonly defaultUpstream?: string;
  /** `set_real_ip_from` / `real_ip_header` / `real_ip_recursive` of this listener. */
  readonly realIp?: RealIpConf | null;
  /** A client closed before its response was complete (nginx's 499), held or forwarding. */
  readonly onClientClosed?: ClientClosedCallback<D>;
  /** An upstream failed a forwarded request (the client got 502/504 or a cut response), in nginx's words. */
  readonly onUpstreamError?: UpstreamErrorCallback<D>;
  /** Every exchange once it is over: status (444, 499), body bytes, time — for access logs and metrics. */
  readonly onCompleted?: CompletedCallback<D>;
  /** The hook threw: the request got a 500; this hears why. */
  readonly onHookError?: (err: unknown) => void;
  /**
   * The address's default server's client connection timers (`client_header_timeout`,
   * `keepalive_*`, …), read per connection (a reload counts); answers the hook gave none of their
   * own go by them too. Absent: nginx's defaults, or the two below.
   */
  readonly clientTimers?: () => ClientTimers;
  /** nginx `keepalive_timeout` (75 s), without `clientTimers`. */
  readonly keepAliveTimeoutMs?: number;
  /** nginx `client_header_timeout` (60 s), without `clientTimers`. */
  readonly headersTimeoutMs?: number;
  /** An `ssl` or `http2` address: TLS, ALPN and h2 in front of the HTTP/1 server (edge-listener.ts). */
  readonly edge?: EdgeConf;
  /**
   * A line about a connection rather than a request, in nginx's error-log words (at `info`): a TLS
   * handshake that failed, an HTTP/2 client refused for the streams it opens.
   */
  readonly onConnectionInfo?: (message: string, socket: Socket) => void;
}
