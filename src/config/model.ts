/**
 * The validated configuration model: what `parseConfigFile` produces from an nginx.conf subset (or the
 * Kubernetes translator builds from Ingress objects), and what `buildSite` turns into engine objects.
 *
 * Everything here is plain data: numbers carry their unit in the name, complex values are parsed once,
 * inheritance (limit_req lists, limit_req_status, real_ip, allow/deny) is already resolved, so each
 * location holds its effective settings. `source` points at the directive for `file:line` messages.
 */

import type { ApiLimiterParameters } from '../engine/api-limiter/api-limiter.ts';
import type { ComplexValue } from '../engine/complex-value.ts';
import type { ClientTimers } from '../engine/http/client-timers.ts';
import type { ExpiresTime } from '../engine/http/expires.ts';
import type { FileTest } from '../engine/http/if-condition.ts';
import type { StaticFiles } from '../engine/http/static-files.ts';
import type { KeyvalType } from '../engine/keyval/keyval-zone.ts';
import type { LogLevel } from '../engine/log-line.ts';
import type { NginxRegex } from '../engine/nginx-regex.ts';
import type { PriorityLevelSpec } from '../engine/priority/priority-level.ts';
import type { GeoDefinition } from '../engine/variables/geo-variable.ts';
import type { MapDefinition, MapEntryDefinition } from '../engine/variables/map-variable.ts';

export interface SourceRef {
  readonly file: string;
  readonly line: number;
}

/** `limit_req_zone key zone=name:size rate=rate [sync];` */
export interface LimitReqZoneSpec {
  readonly name: string;
  readonly key: ComplexValue;
  readonly sizeBytes: number;
  /** Requests per second × 1000, integer-divided as nginx does (`1r/m` → 16). */
  readonly rateMilli: number;
  readonly sync: boolean;
  readonly source: SourceRef;
}

/** `limit_req zone=name [burst=N] [nodelay | delay=N];` */
export interface LimitReqSpec {
  readonly zone: string;
  /** `burst × 1000`. */
  readonly burstMilli: number;
  /** `delay × 1000`; `nodelay` is nginx's NGX_MAX_INT_T_VALUE/1000×1000, here `Number.MAX_SAFE_INTEGER`. */
  readonly delayMilli: number;
  readonly source: SourceRef;
}

/** The limit_req settings in force at one level after nginx's merge rules. */
export interface EffectiveLimitReq {
  /** Inherited from the enclosing level only when this level has no `limit_req` at all. */
  readonly limits: readonly LimitReqSpec[];
  /** `limit_req_status`, 400..599, default 503. */
  readonly status: number;
  /** `limit_req_log_level`, default `error`. */
  readonly logLevel: LogLevel;
  /** `limit_req_dry_run`, default off. */
  readonly dryRun: boolean;
  /** Extension (`limit_req_retry_after on`): add `Retry-After` to rejections. Default off. */
  readonly retryAfter: boolean;
  /** Extension (`limit_req_ratelimit_headers on`): IETF `RateLimit-Policy`/`RateLimit`. Default off. */
  readonly rateLimitHeaders: boolean;
}

/** `limit_conn_zone key zone=name:size;` */
export interface LimitConnZoneSpec {
  readonly name: string;
  readonly key: ComplexValue;
  readonly sizeBytes: number;
  readonly source: SourceRef;
}

/** `limit_conn zone number;` */
export interface LimitConnSpec {
  readonly zone: string;
  /** Requests in progress allowed per key, 1..65535. */
  readonly conn: number;
  readonly source: SourceRef;
}

/** The limit_conn settings in force at one level after nginx's merge rules. */
export interface EffectiveLimitConn {
  /** Inherited from the enclosing level only when this level has no `limit_conn` at all. */
  readonly limits: readonly LimitConnSpec[];
  /** `limit_conn_status`, 400..599, default 503. */
  readonly status: number;
  /** `limit_conn_log_level`, default `error`. */
  readonly logLevel: LogLevel;
  /** `limit_conn_dry_run`, default off. */
  readonly dryRun: boolean;
  /** Extension (`limit_conn_retry_after on | time`): `Retry-After` on rejections, ms; null: none (default). */
  readonly retryAfterMs: number | null;
}

/** Extension: `api_rate_limit_zone name option=value ...;` (Cilium's API rate limiter). */
export interface ApiRateLimitZoneSpec {
  readonly name: string;
  readonly params: ApiLimiterParameters;
  readonly source: SourceRef;
}

/** The API limiter in force at one level: `api_rate_limit`, `api_rate_limit_status` (429). */
export interface EffectiveApiRateLimit {
  readonly zone: string | null;
  readonly status: number;
  /** Where `api_rate_limit` names the zone (for an undefined one). */
  readonly source: SourceRef | null;
}

/** Extension: `priority_level_zone name …;` (Kubernetes API Priority and Fairness's priority level). */
export interface PriorityLevelZoneSpec extends PriorityLevelSpec {
  readonly source: SourceRef;
}

/** The priority level in force at one level: `priority_level` and its companions. */
export interface EffectivePriorityLevel {
  /** The level's name, per request (empty: not limited); null without `priority_level`. */
  readonly level: ComplexValue | null;
  /** The flow distinguisher (default `$binary_remote_addr`). */
  readonly flow: ComplexValue | null;
  /** `priority_level_status` (429, as APF). */
  readonly status: number;
  readonly logLevel: LogLevel;
  readonly dryRun: boolean;
  /** `priority_level_headers`: the answer names the level it was classified into. */
  readonly headers: boolean;
  /** Where `priority_level` is (for an undefined level). */
  readonly source: SourceRef | null;
}

/** `proxy_connect_timeout`, `proxy_read_timeout`, `proxy_send_timeout` after inheritance (60 s each). */
export interface ProxyTimeouts {
  readonly connectMs: number;
  readonly readMs: number;
  readonly sendMs: number;
}

/** `proxy_http_version` (default `1.0`). */
export type ProxyHttpVersion = '1.0' | '1.1';

/** `proxy_set_header field value;`: the value as written, and parsed (null: written empty). */
export interface ProxySetHeader {
  readonly field: string;
  readonly value: string;
  readonly complex: ComplexValue | null;
}

/** `add_header name value [always];`: `value` null when written empty (nothing is added). */
export interface AddHeaderSpec {
  readonly name: string;
  readonly value: ComplexValue | null;
  readonly always: boolean;
}

/** `expires` as written: its kind and time, or (`value`) a value with variables read per request. */
export interface ExpiresSpec extends ExpiresTime {
  readonly value: ComplexValue | null;
}

/** What a level gives its answers beyond `add_header`: `expires`, `limit_rate`, `limit_rate_after`. */
export interface AnswerSpec {
  readonly expires: ExpiresSpec;
  /** A size, or a value with variables; null: not set (no limit). */
  readonly limitRate: ComplexValue | null;
  readonly limitRateAfter: ComplexValue | null;
}

/** `large_client_header_buffers number size;` (default 4 8k). */
export interface HeaderBuffersSpec {
  readonly count: number;
  readonly bytes: number;
}

/**
 * How much of a request head nginx holds for a server (ngx_http_core_module): the request line and
 * header lines go into `client_header_buffer_size` (1k), then into at most `count` buffers of `bytes`
 * (`large_client_header_buffers 4 8k`); no line may be longer than one of those.
 */
export interface HeaderLimits {
  readonly clientHeaderBufferBytes: number;
  readonly largeClientHeaderBuffers: HeaderBuffersSpec;
}

/** `keyval_zone zone=name:size [state=file] [timeout=time] [type=string|ip|prefix] [sync];` */
export interface KeyvalZoneSpec {
  readonly name: string;
  readonly sizeBytes: number;
  readonly stateFile: string | null;
  readonly timeoutMs: number | null;
  readonly type: KeyvalType;
  readonly sync: boolean;
  readonly source: SourceRef;
}

/** `keyval key $variable zone=name;` */
export interface KeyvalSpec {
  readonly key: ComplexValue;
  /** Without the `$`. */
  readonly variable: string;
  readonly zone: string;
  readonly source: SourceRef;
}

export type MapEntrySpec = MapEntryDefinition;

/**
 * `map source $variable { hostnames; volatile; default v; match v; ~regex v; ~*regex v; }`: the engine's
 * definition (entries in configuration order, exact keys lowercased) plus where it was written.
 */
export interface MapSpec extends MapDefinition {
  readonly sourceRef: SourceRef;
}

/** `geo [$address] $variable { default v; CIDR v; }` (`$remote_addr` when the address is omitted). */
export interface GeoSpec extends GeoDefinition {
  readonly sourceRef: SourceRef;
}

export interface UpstreamServerSpec {
  readonly host: string;
  readonly port: number;
  readonly weight: number;
  /** `max_conns`: requests the server carries at once; absent or 0, no limit. */
  readonly maxConns?: number;
  /** `backup`: taken only when no other server can be (absent: false). */
  readonly backup?: true;
  /** `down`: never taken (absent: false). */
  readonly down?: true;
  /** `max_fails` (absent: 1) and `fail_timeout` (absent: 10s). */
  readonly maxFails?: number;
  readonly failTimeoutMs?: number;
}

/** NGINX Plus's `queue number [timeout=time]`: requests waiting for a server of the group. */
export interface UpstreamQueueSpec {
  readonly size: number;
  /** `timeout=` (60s): the longest a request waits before its 502. */
  readonly timeoutMs: number;
}

/**
 * `upstream name { server host:port [weight=N] [max_conns=N]; keepalive N; keepalive_requests N;
 * keepalive_time t; keepalive_timeout t; queue N [timeout=t]; }` (ngx_http_upstream_keepalive_module,
 * and NGINX Plus's queue).
 */
export interface UpstreamSpec {
  readonly name: string;
  readonly servers: readonly UpstreamServerSpec[];
  /** `keepalive`: idle connections kept for the group; null without the directive (the replica's default). */
  readonly keepalive: number | null;
  /** `keepalive_requests` (1000): requests a connection carries before it is closed. */
  readonly keepaliveRequests: number;
  /** `keepalive_time` (1h): how long after its connect a connection may still be kept. */
  readonly keepaliveTimeMs: number;
  /** `keepalive_timeout` (60s): how long an idle connection is kept. */
  readonly keepaliveTimeoutMs: number;
  /** `queue`: null without the directive (a request no server can take gets its 502 at once). */
  readonly queue: UpstreamQueueSpec | null;
  /** `zone name [size]`: absent without it. */
  readonly zone?: UpstreamZoneSpec;
  readonly source: SourceRef;
}

export interface UpstreamZoneSpec {
  readonly name: string;
  readonly source: SourceRef;
}

/** `set_real_ip_from`, `real_ip_header`, `real_ip_recursive`, after inheritance. */
export interface RealIpConf {
  /** CIDR text as written; empty means the realip module is inactive. */
  readonly trustedFrom: readonly string[];
  /** Default `X-Real-IP`; `X-Forwarded-For` or any header name; `proxy_protocol` is not supported. */
  readonly header: string;
  readonly recursive: boolean;
}

/** `allow`/`deny` in order; the first match decides. */
export interface AccessRule {
  readonly action: 'allow' | 'deny';
  /** `all` or CIDR/address text. */
  readonly from: string;
}

export interface ListenSpec {
  readonly host: string | null;
  readonly port: number;
  readonly defaultServer: boolean;
  /** `listen … ssl`: the address terminates TLS (any server's listen on it says so, as in nginx). */
  readonly ssl: boolean;
  /** `listen … http2`: the address speaks HTTP/2 (ALPN `h2` with ssl, prior-knowledge h2c without). */
  readonly http2: boolean;
}

/** `ssl_session_cache off | none | builtin[:size] | shared:name:size`. */
export type SslSessionCache = 'off' | 'none' | 'builtin' | 'shared';

import type { SslVerifyClient } from '../engine/http/client-verify.ts';
import type { ProxyRules } from '../engine/http/proxy-rules.ts';
import type { ProxySslSettings } from '../engine/http/proxy-ssl.ts';

export type { SslVerifyClient };

/** One `ssl_certificate` with its `ssl_certificate_key`, read when the configuration was. */
export interface SslCertificate {
  readonly certPath: string;
  readonly keyPath: string;
  /** PEM text. */
  readonly cert: string;
  readonly key: string;
}

/** A server's ngx_http_ssl_module settings (used when one of its addresses is `ssl`). */
export interface SslConf {
  readonly certificates: readonly SslCertificate[];
  /** `ssl_protocols` (TLSv1 TLSv1.1 TLSv1.2 TLSv1.3). */
  readonly protocols: readonly string[];
  /** `ssl_ciphers`, OpenSSL's syntax (HIGH:!aNULL:!MD5). */
  readonly ciphers: string;
  readonly preferServerCiphers: boolean;
  readonly sessionCache: SslSessionCache;
  readonly sessionTimeoutS: number;
  readonly sessionTickets: boolean;
  /** `ssl_client_certificate`'s CA bundle, PEM text. */
  readonly clientCertificate: string | null;
  readonly verifyClient: SslVerifyClient;
  readonly verifyDepth: number;
  /** `ssl_ecdh_curve` (auto), OpenSSL's list syntax. */
  readonly ecdhCurve: string;
  /** `ssl_dhparam`'s PEM text (DHE ciphers), or null. */
  readonly dhparam: string | null;
  /** `http2 on` (nginx 1.25.1+): this server offers h2. */
  readonly http2: boolean;
}

export type LocationMatch = '=' | 'prefix' | '^~' | '~' | '~*';

export interface ReturnSpec {
  readonly code: number;
  /** Body text, or the redirect URL for 301/302/303/307/308. */
  readonly text: ComplexValue | null;
}

/** An `if` condition of ngx_http_rewrite_module: a variable alone (true unless "" or "0"), or compared. */
export interface IfCondition {
  /** The variable tested, without `$`. */
  readonly variable: string;
  readonly op: 'truthy' | '=' | '!=' | '~' | '~*' | '!~' | '!~*' | FileTest;
  /** The right side of `=` / `!=`, or a file test's path (a complex value). */
  readonly value: ComplexValue | null;
  /** The regular expression of the others, as written and compiled (`*`: case-insensitive). */
  readonly pattern: string | null;
  readonly regex: NginxRegex | null;
}

/** One status of an `error_page` line. */
export interface ErrorPageSpec {
  readonly code: number;
  /** `=response`: the status answered (0: the redirected request's own, `=` alone; -1: the error's). */
  readonly overwrite: number;
  /** A URI (internal redirect), `@name` (a named location) or anything else (a redirect). */
  readonly uri: ComplexValue;
  readonly source: SourceRef;
}

/** `limit_except method … { allow/deny }`: methods listed (`GET` with `HEAD`), the block's rules. */
export interface LimitExcept {
  readonly methods: readonly string[];
  /** null: the location's rules. */
  readonly access: readonly AccessRule[] | null;
  /** The block's own `proxy_pass` (no URI part); null: the location's. */
  readonly proxyPass: string | null;
}

/** `rewrite`'s flag. */
export type RewriteFlag = 'last' | 'break' | 'redirect' | 'permanent';

/**
 * A directive of ngx_http_rewrite_module's script, in the order written: `rewrite`, `set`, `break`,
 * `return`, and `if` with the steps of its block (and, in a location, its own `add_header` lines: null,
 * the location's).
 */
export type RewriteStep =
  | {
      readonly op: 'rewrite';
      readonly pattern: string;
      readonly regex: NginxRegex;
      readonly replacement: ComplexValue;
      readonly flag: RewriteFlag | null;
    }
  | { readonly op: 'set'; readonly variable: string; readonly value: ComplexValue }
  | { readonly op: 'break' }
  | { readonly op: 'return'; readonly answer: ReturnSpec }
  | {
      readonly op: 'if';
      readonly condition: IfCondition;
      readonly steps: readonly RewriteStep[];
      readonly addHeaders: readonly AddHeaderSpec[] | null;
      /** The block's own `proxy_pass` (no URI part); null: the location's. */
      readonly proxyPass: string | null;
      /** The block's own `expires`, `limit_rate`, `limit_rate_after`; null (or absent): the location's. */
      readonly answer?: Partial<AnswerSpec> | null;
    };

/** A file the configuration read, as named, and where. */
export interface NamedFile {
  readonly path: string;
  readonly source: SourceRef;
}

/** The `proxy_ssl_*` settings in force, and where the certificate and key files were named. */
export interface ProxySslConf extends ProxySslSettings {
  readonly certificateFile: NamedFile | null;
  readonly certificateKeyFile: NamedFile | null;
}

export interface LocationConf {
  readonly match: LocationMatch;
  readonly pattern: string;
  /** `pattern` compiled, for `~` and `~*` (case-insensitive); null otherwise. */
  readonly regex: NginxRegex | null;
  readonly locations: readonly LocationConf[];
  readonly limitReq: EffectiveLimitReq;
  readonly limitConn: EffectiveLimitConn;
  readonly apiRateLimit: EffectiveApiRateLimit;
  readonly priorityLevel: EffectivePriorityLevel;
  /** `proxy_pass` target as written, e.g. `http://backend` or `http://127.0.0.1:8080/path`. */
  readonly proxyPass: string | null;
  readonly limitExcept: LimitExcept | null;
  /** The location's rewrite module script, in order (REWRITE phase). */
  readonly script: readonly RewriteStep[];
  /** `rewrite_log` in force. */
  readonly rewriteLog: boolean;
  /** The `error_page` lines in force (a level's own, else the enclosing level's). */
  readonly errorPages: readonly ErrorPageSpec[];
  readonly recursiveErrorPages: boolean;
  /** `api [write=on|off];` — an NGINX Plus API location. */
  readonly api: { readonly write: boolean } | null;
  /** `internal`: a request that is not internal (no rewrite, no internal redirect) is answered 404. */
  readonly internal: boolean;
  readonly access: readonly AccessRule[];
  readonly realIp: RealIpConf;
  readonly proxyTimeouts: ProxyTimeouts;
  readonly proxyHttpVersion: ProxyHttpVersion;
  /** The `proxy_set_header` list in force: a level's own list, else the enclosing level's. */
  readonly proxySetHeaders: readonly ProxySetHeader[];
  /** The `access_log` lines in force: a level's own, else the enclosing level's. */
  readonly accessLogs: readonly AccessLogSpec[];
  /** `proxy_next_upstream*`, `proxy_pass_request_*` in force. */
  readonly proxyRules: ProxyRules;
  /** `proxy_ssl_*` in force. */
  readonly proxySsl: ProxySslConf;
  /** The `add_header` list in force: a level's own list, else the enclosing level's. */
  readonly addHeaders: readonly AddHeaderSpec[];
  /** `expires`, `limit_rate`, `limit_rate_after` in force, each the innermost level's. */
  readonly answer: AnswerSpec;
  /** `client_max_body_size` in force, bytes (default 1m; 0: no limit). */
  readonly clientMaxBodyBytes: number;
  /** The client connection's timers and body buffering in force. */
  readonly client: ClientTimers;
  /** `root`/`alias`, `index`, `types`, `default_type` in force. */
  readonly files: StaticFiles;
  readonly source: SourceRef;
}

export interface ServerConf extends HeaderLimits {
  readonly listen: readonly ListenSpec[];
  readonly ssl: SslConf;
  /** As written: exact, `*.wild`, `wild.*`, `.example.com`, `~regex`, or `""`. Default `[""]`. */
  readonly serverNames: readonly string[];
  /** The `~regex` names, compiled (caseless, as nginx does), in their order: TLS picks a server by SNI too. */
  readonly serverNameRegexes: readonly NginxRegex[];
  readonly locations: readonly LocationConf[];
  /** The server's rewrite module script, in order (SERVER_REWRITE phase). */
  readonly script: readonly RewriteStep[];
  /** `rewrite_log` in force. */
  readonly rewriteLog: boolean;
  /** The `error_page` lines in force for requests that match no location. */
  readonly errorPages: readonly ErrorPageSpec[];
  readonly recursiveErrorPages: boolean;
  /** `location @name` blocks: what `error_page … @name` goes to. */
  readonly namedLocations: readonly LocationConf[];
  /** Effective settings for a request that matches no location (nginx serves it at server level). */
  readonly limitReq: EffectiveLimitReq;
  readonly limitConn: EffectiveLimitConn;
  readonly apiRateLimit: EffectiveApiRateLimit;
  readonly priorityLevel: EffectivePriorityLevel;
  readonly access: readonly AccessRule[];
  readonly realIp: RealIpConf;
  readonly proxyTimeouts: ProxyTimeouts;
  readonly proxyHttpVersion: ProxyHttpVersion;
  /** The `proxy_set_header` list in force: a level's own list, else the enclosing level's. */
  readonly proxySetHeaders: readonly ProxySetHeader[];
  /** The `access_log` lines in force: a level's own, else the enclosing level's. */
  readonly accessLogs: readonly AccessLogSpec[];
  /** `proxy_next_upstream*`, `proxy_pass_request_*` in force. */
  readonly proxyRules: ProxyRules;
  /** `proxy_ssl_*` in force. */
  readonly proxySsl: ProxySslConf;
  /** The `add_header` list in force: a level's own list, else the enclosing level's. */
  readonly addHeaders: readonly AddHeaderSpec[];
  /** `expires`, `limit_rate`, `limit_rate_after` in force, each the innermost level's. */
  readonly answer: AnswerSpec;
  /** `client_max_body_size` for requests that match no location. */
  readonly clientMaxBodyBytes: number;
  /** The client connection's timers for requests that match no location (and, on the address's
   * default server, `client_header_timeout` and what comes before a request is routed). */
  readonly client: ClientTimers;
  /** `root`, `index`, `types`, `default_type` for requests that match no location. */
  readonly files: StaticFiles;
  readonly source: SourceRef;
}

export interface HttpConf {
  readonly limitReqZones: readonly LimitReqZoneSpec[];
  readonly limitConnZones: readonly LimitConnZoneSpec[];
  readonly apiRateLimitZones: readonly ApiRateLimitZoneSpec[];
  readonly priorityLevelZones: readonly PriorityLevelZoneSpec[];
  /** `priority_level_concurrency` (600): the seats the limited levels share. */
  readonly priorityLevelConcurrency: number;
  readonly keyvalZones: readonly KeyvalZoneSpec[];
  readonly keyvals: readonly KeyvalSpec[];
  readonly maps: readonly MapSpec[];
  readonly geos: readonly GeoSpec[];
  readonly upstreams: readonly UpstreamSpec[];
  readonly servers: readonly ServerConf[];
  /** `log_format`s, in order (nginx's predefined `combined` is not among them). */
  readonly logFormats: readonly LogFormatSpec[];
}

/** `access_log path [format] [buffer=] [flush=] [if=]`: its file (full path), format and condition. */
export interface AccessLogSpec {
  readonly path: string;
  readonly format: LogFormatSpec;
  readonly condition: ComplexValue | null;
  readonly source: SourceRef;
}

/** `log_format`'s `escape=` parameter. */
export type LogEscape = 'default' | 'json' | 'none';

/** A piece of a log format: literal text, or the value of a variable (its name without `$`). */
export type LogFormatPart = { readonly text: string } | { readonly variable: string };

/** `log_format name [escape=default|json|none] string …;` — read by `limitswitch replay`. */
export interface LogFormatSpec {
  readonly name: string;
  readonly escape: LogEscape;
  readonly parts: readonly LogFormatPart[];
  readonly source: SourceRef;
}

/** A whole configuration file (only the `http` block matters for limiting). */
export interface Config {
  readonly file: string;
  readonly http: HttpConf;
  /** `worker_processes`; absent: one, as nginx's default. */
  readonly workerProcesses?: WorkerProcessesConf;
}

/** `worker_processes N | auto` and where it was written. */
export interface WorkerProcessesConf {
  readonly count: number | 'auto';
  readonly source: SourceRef;
}
