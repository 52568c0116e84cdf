import { KEEPALIVE_DISABLE_MSIE6 } from './keepalive-disable.ts';

/** `client_body_temp_path`: a folder, and up to three levels of subfolders named by the file's last digits. */
export interface BodyTempPath {
  readonly path: string;
  readonly levels: readonly number[];
}

/**
 * ngx_http_core_module's limits on how long a client connection may hold the server, as a location
 * (or, for what comes before any location, the address's default server) has them in force.
 */
export interface ClientTimers {
  /** `client_header_timeout` (60s): reading a request's head. From the address's default server. */
  readonly headerTimeoutMs: number;
  /** `client_body_timeout` (60s): between two reads of a request body; past it the connection closes (408). */
  readonly bodyTimeoutMs: number;
  /** `send_timeout` (60s): between two writes to a client that takes nothing; past it the connection closes. */
  readonly sendTimeoutMs: number;
  /** `keepalive_timeout` (75s): idle between requests; 0 turns keep-alive off. */
  readonly keepaliveTimeoutMs: number;
  /** `keepalive_timeout`'s second parameter: the `Keep-Alive: timeout=` value sent, s (null: none). */
  readonly keepaliveHeaderS: number | null;
  /** `keepalive_requests` (1000): requests a connection carries (HTTP/2: streams) before it closes. */
  readonly keepaliveRequests: number;
  /** `keepalive_time` (1h): after this long, a connection carries no more requests. */
  readonly keepaliveTimeMs: number;
  /** `lingering_close` (on): how a connection closes while the client may still be sending. */
  readonly lingeringClose: 'on' | 'off' | 'always';
  /** `lingering_time` (30s) and `lingering_timeout` (5s). */
  readonly lingeringTimeMs: number;
  readonly lingeringTimeoutMs: number;
  /**
   * `client_body_buffer_size` (16k on 64-bit): a body up to this size is read whole before the
   * request goes to a server, when `proxy_request_buffering` is on (the default).
   */
  readonly bodyBufferBytes: number;
  /** `proxy_request_buffering` (on). */
  readonly requestBuffering: boolean;
  /**
   * `client_body_in_file_only` (off): `on` writes every body read whole to a file that stays after the
   * request; `clean` removes it once the request is over.
   */
  readonly bodyInFileOnly: 'off' | 'on' | 'clean';
  /**
   * `client_body_in_single_buffer` (off): nginx sizes its body buffer to hold what came with the head
   * too; the replica keeps a body in memory as one buffer either way.
   */
  readonly bodyInSingleBuffer: boolean;
  /**
   * `client_body_temp_path path [level1 [level2 [level3]]]`: the folder of the files bodies go to (when
   * larger than the buffer, or `client_body_in_file_only`), and the lengths of its subfolder names; null:
   * the system's temporary folder (nginx's `client_body_temp` under its prefix: a replica's prefix, the
   * configuration's folder or the working directory, is often read-only, as in its Kubernetes pods).
   */
  readonly bodyTempPath: BodyTempPath | null;
  /**
   * `http2_body_preread_size` (64k): the stream window an HTTP/2 connection advertises (SETTINGS
   * INITIAL_WINDOW_SIZE), what a client may send of a body before it is read. From the address's
   * default server.
   */
  readonly h2BodyPrereadBytes: number;
  /** `server_tokens` (on): the `Server` field names the version. */
  readonly serverTokens: boolean;
  /** `keepalive_disable` (msie6): its bits, the browsers whose requests get no keep-alive (keepalive-disable.ts). */
  readonly keepaliveDisable: number;
  /**
   * The header filter's redirects: `absolute_redirect` (on: a `Location` starting with `/` is made
   * absolute), `server_name_in_redirect` (off: with the request's host, on: the server's first name)
   * and `port_in_redirect` (on: with the port unless it is the scheme's own).
   */
  readonly absoluteRedirect: boolean;
  readonly serverNameInRedirect: boolean;
  readonly portInRedirect: boolean;
}

/** nginx's defaults. */
export const NGINX_CLIENT_TIMERS: ClientTimers = Object.freeze({
  headerTimeoutMs: 60_000,
  bodyTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  keepaliveTimeoutMs: 75_000,
  keepaliveHeaderS: null,
  keepaliveRequests: 1000,
  keepaliveTimeMs: 3_600_000,
  lingeringClose: 'on',
  lingeringTimeMs: 30_000,
  lingeringTimeoutMs: 5_000,
  bodyBufferBytes: 16 * 1024,
  requestBuffering: true,
  bodyInFileOnly: 'off',
  bodyInSingleBuffer: false,
  bodyTempPath: null,
  h2BodyPrereadBytes: 65_536,
  serverTokens: true,
  keepaliveDisable: KEEPALIVE_DISABLE_MSIE6,
  absoluteRedirect: true,
  serverNameInRedirect: false,
  portInRedirect: true,
});
