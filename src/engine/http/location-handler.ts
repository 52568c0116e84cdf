/**
 * What a compiled location (or a server with no matching location) does with a request: its
 * `return`s, limits, access list and content handler, as the phases read them.
 */

import type { ApiLimiter } from '../api-limiter/api-limiter.ts';
import type { LimitConnPolicy } from '../limit-conn/limit-conn.ts';
import type { LimitReqPolicy } from '../limit-req/limit-req.ts';
import type { LogLevel } from '../log-line.ts';
import type { AccessList } from '../net/access-list.ts';
import type { PriorityLevel } from '../priority/priority-level.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';
import type { CompiledAccessLog } from './access-log.ts';
import type { CompiledAddHeader } from './add-headers.ts';
import type { CompiledAnswerRate } from './answer-rate.ts';
import type { ClientTimers } from './client-timers.ts';
import type { ErrorPages } from './error-pages.ts';
import type { CompiledExpires } from './expires.ts';
import type { ProxyHeaders } from './proxy-headers.ts';
import type { ProxyRules } from './proxy-rules.ts';
import type { ProxySsl } from './proxy-ssl.ts';
import type { RewriteScript } from './rewrite-script.ts';
import type { StaticFiles } from './static-files.ts';

/** `set_real_ip_from`, `real_ip_header`, `real_ip_recursive`. */
export interface RealIpDefinition {
  readonly trustedFrom: readonly string[];
  readonly header: string;
  readonly recursive: boolean;
}

/** A location's Cilium-style limiter and its refusal status. */
export interface ApiRateLimitRule {
  readonly limiter: ApiLimiter;
  readonly status: number;
}

/** A location's `priority_level`: the level and flow of a request, and the answer to a refusal. */
export interface PriorityLevelRule {
  readonly levelOf: VariableGetter;
  readonly flowOf: VariableGetter;
  readonly levels: ReadonlyMap<string, PriorityLevel>;
  readonly status: number;
  readonly logLevel: LogLevel;
  readonly dryRun: boolean;
  readonly headers: boolean;
}

/** What a location (or a server with no matching location) does with a request. */
export interface LocationHandler {
  /** `location /coffee`, for logs. */
  readonly name: string;
  readonly limitReq: LimitReqPolicy<RequestContext>;
  readonly limitConn: LimitConnPolicy<RequestContext>;
  /** The `api_rate_limit` extension (Cilium's API limiter): proxied requests wait for it. */
  readonly apiRateLimit: ApiRateLimitRule | null;
  /** The `priority_level` extension (API Priority and Fairness): proxied requests are admitted by it. */
  readonly priorityLevel: PriorityLevelRule | null;
  /** The level's rewrite module script (`rewrite`, `set`, `if`, `return`, …); a server's runs in SERVER_REWRITE. */
  readonly script: RewriteScript<LocationHandler>;
  /** `internal`: only a rewritten or internally redirected request may use it (others get 404). */
  readonly internal: boolean;
  /** `limit_except`: a request whose method is not listed is under `handler` (the block's rules). */
  readonly limitExcept: { readonly methods: ReadonlySet<string>; readonly handler: LocationHandler } | null;
  /** `error_page` and `recursive_error_pages` in force. */
  readonly errorPages: ErrorPages;
  readonly proxyPass: string | null;
  /** A `proxy_pass` with variables, evaluated per request (nginx then looks its host up among the upstreams). */
  readonly proxyPassUrl: VariableGetter | null;
  readonly api: { readonly write: boolean } | null;
  readonly access: AccessList;
  readonly realIp: RealIpDefinition;
  /** `proxy_connect_timeout`, `proxy_read_timeout`, `proxy_send_timeout`, for whoever proxies. */
  readonly proxyTimeouts: { readonly connectMs: number; readonly readMs: number; readonly sendMs: number };
  /** `proxy_next_upstream*`, `proxy_pass_request_*` (proxy-rules.ts). */
  readonly proxyRules: ProxyRules;
  /** `proxy_ssl_*`: how a request to an `https://` upstream makes its TLS connection (proxy-ssl.ts). */
  readonly proxySsl: ProxySsl;
  /** The `access_log` files its requests are logged to (access-log.ts). */
  readonly accessLogs: readonly CompiledAccessLog[];
  /** The `proxy_set_header` lines in force merged with nginx's defaults (proxy-headers.ts). */
  readonly proxyHeaders: ProxyHeaders;
  /** `proxy_http_version 1.1` with `proxy_set_header Upgrade`/`Connection`: WebSocket upgrades are tunnelled. */
  readonly proxyUpgrade: boolean;
  /** `client_max_body_size`, bytes; 0: no limit. */
  readonly clientMaxBodyBytes: number;
  /** The client connection's timers and body buffering in force (`client_body_timeout`, …). */
  readonly client: ClientTimers;
  /** The `add_header` lines in force, for every answer given under this handler. */
  readonly addHeaders: readonly CompiledAddHeader[];
  /** `expires` in force; null: off. */
  readonly expires: CompiledExpires | null;
  /** `limit_rate` and `limit_rate_after` in force. */
  readonly answerRate: CompiledAnswerRate;
  /** What the location answers from disk when it neither proxies nor returns (static-files.ts). */
  readonly files: StaticFiles;
}
