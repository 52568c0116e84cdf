/**
 * What the engine knows about one request: the facts the caller supplies (after realip resolved the
 * client address) and what routing derived, plus the per-request variable cache (nginx caches a
 * variable's value for the rest of the request unless it is volatile).
 */

import type { LimitConnStatus } from '../limit-conn/limit-conn.ts';
import type { LimitReqStatus } from '../limit-req/limit-req.ts';
import type { NginxRegex, RegexCaptures } from '../nginx-regex.ts';
import type { RequestProgress } from './request-progress.ts';

/** The TLS connection a request came on (ngx_http_ssl_module's variables), read when asked. */
export interface TlsFacts {
  /** `$ssl_protocol`: `TLSv1.3`. */
  readonly protocol: string;
  /** `$ssl_cipher`: OpenSSL's name, `TLS_AES_256_GCM_SHA384`. */
  readonly cipher: string;
  /** `$ssl_server_name`: the SNI name, `""` without one. */
  readonly serverName: string;
  /** `$ssl_client_s_dn` / `$ssl_client_i_dn`: RFC 2253 (`CN=client,O=Example`), `""` without one. */
  readonly clientSubjectDn: string;
  readonly clientIssuerDn: string;
  /** `$ssl_client_verify`: `SUCCESS`, `FAILED:reason` or `NONE`. */
  readonly clientVerify: string;
  /** `$ssl_session_reused`: `r` or `.`. */
  readonly sessionReused: string;
  /** `$ssl_session_id`: the session's ID in hex, `""` when it has none. */
  readonly sessionId: string;
  /** `$ssl_ciphers` / `$ssl_curves`: what the ClientHello offered, OpenSSL's names `:`-separated. */
  readonly ciphers: string;
  readonly curves: string;
  /** `$ssl_alpn_protocol`: the protocol ALPN selected, `""` without one. */
  readonly alpnProtocol: string;
  /** The client certificate as OpenSSL's PEM (`$ssl_client_raw_cert`), `""` without one. */
  readonly clientRawCert: string;
  /** `$ssl_client_serial`: hex, as i2a_ASN1_INTEGER prints it. */
  readonly clientSerial: string;
  /** `$ssl_client_fingerprint`: SHA-1 of the DER, lower-case hex. */
  readonly clientFingerprint: string;
  /** `$ssl_client_v_start` / `$ssl_client_v_end`: as ASN1_TIME_print prints them (`Dec  5 09:00:00 2026 GMT`). */
  readonly clientVStart: string;
  readonly clientVEnd: string;
  /** The end of validity (epoch ms) for `$ssl_client_v_remain`; NaN without a certificate. */
  readonly clientVEndMs: number;
  /** `$ssl_client_s_dn_legacy` / `$ssl_client_i_dn_legacy`: X509_NAME_oneline's `/CN=name`. */
  readonly clientSubjectDnLegacy: string;
  readonly clientIssuerDnLegacy: string;
}

/** What a path names on disk (stat, links followed), for `if (-f …)` and its kin. */
export interface FileStat {
  readonly kind: 'file' | 'dir' | 'other';
  /** The owner's execute bit (`-x`). */
  readonly exec: boolean;
}

/** Facts supplied by the proxy (or by `simulate`). Strings are byte strings. */
export interface RequestFacts {
  readonly method: string;
  readonly scheme: 'http' | 'https';
  /** The request target as received (`$request_uri`). */
  readonly target: string;
  /** Header names lower-cased; repeated headers joined as the proxy received them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Client address after realip (`$remote_addr`), IPv4-mapped IPv6 already unmapped. */
  readonly remoteAddr: string;
  readonly remotePort: number;
  /** The socket peer before realip (`$realip_remote_addr`, `$realip_remote_port`). */
  readonly socketAddr?: string;
  readonly socketPort?: number;
  readonly serverAddr: string;
  readonly serverPort: number;
  /** `$request_id`: 32 hex characters chosen by the caller. */
  readonly requestId?: string;
  /** `$hostname`. */
  readonly hostname?: string;
  /** The request's `Content-Length` (absent: none, e.g. a chunked body), for `client_max_body_size`. */
  readonly contentLength?: number;
  /** `$server_protocol`: `HTTP/1.1`, `HTTP/2.0` (absent: `HTTP/1.1`). */
  readonly protocol?: string;
  /** The TLS connection's facts (absent: plain HTTP). */
  readonly tls?: TlsFacts | null;
  /** Looks a path up on disk for `if`'s file tests (absent, or null: nothing there). */
  statFile?(path: string): FileStat | null;
  /** What the data path learned since the decision (request-progress.ts); absent: nothing yet. */
  readonly progress?: RequestProgress;
  /** `$connection`, `$connection_requests` (the current one included), `$connection_time` in ms. */
  readonly connectionNumber?: number;
  readonly connectionRequests?: number;
  readonly connectionMs?: number;
}

export interface RequestContext {
  readonly facts: RequestFacts;
  /** `$uri` (decoded, normalised; a `rewrite` changes it, as it does the arguments). */
  uri: string;
  args: string;
  hasArgs: boolean;
  /** `$host`: request host lower-cased without port, or the server's first name. */
  readonly host: string;
  /** `$server_name`: the first name of the chosen server. */
  readonly serverName: string;
  /** The engine's clock for this request (nginx's cached `ngx_current_msec`). */
  readonly nowMs: number;
  /** `$limit_req_status` once the handler ran. */
  limitReqStatus: LimitReqStatus;
  /** `$limit_conn_status` once the handler ran. */
  limitConnStatus: LimitConnStatus;
  /** `set $limit_rate`'s rate in bytes/s (nginx's `r->limit_rate` once `limit_rate_set`); null: not set. */
  limitRate: number | null;
  /** Variable slot → cached value. */
  readonly cache: (string | undefined)[];
  /**
   * The last successful map regex and the value it matched, for `$1`…: its captures are found when one
   * is first read (most maps read none, and a match is cheaper than its captures).
   */
  lastMatch: RegexMatch | null;
}

/** A regex that matched `subject`; `captures` is filled when `$n` is first read. */
export interface RegexMatch {
  readonly regex: NginxRegex;
  readonly subject: string;
  captures?: RegexCaptures | null;
}

export function newRequestContext(
  facts: RequestFacts,
  target: { uri: string; args: string; hasArgs: boolean },
  host: string,
  serverName: string,
  nowMs: number,
  slots: number,
  cache?: (string | undefined)[],
): RequestContext {
  return {
    facts,
    uri: target.uri,
    args: target.args,
    hasArgs: target.hasArgs,
    host,
    serverName,
    nowMs,
    limitReqStatus: '',
    limitConnStatus: '',
    limitRate: null,
    // an internal redirect keeps the request's variables (r->variables)
    cache: cache ?? new Array<string | undefined>(slots),
    lastMatch: null,
  };
}
