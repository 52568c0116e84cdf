/**
 * Mutable per-block state while directives are read. `null` means "not set at this level", which is
 * what nginx's merge step needs; merge.ts turns builders into the frozen model.
 */
import type { ComplexValue } from '../engine/complex-value.ts';
import type { ClientTimers } from '../engine/http/client-timers.ts';
import type { ProxyRules } from '../engine/http/proxy-rules.ts';
import type { ProxySslSettings } from '../engine/http/proxy-ssl.ts';
import type { DocumentRoot } from '../engine/http/static-files.ts';
import type { LogLevel } from '../engine/log-line.ts';
import type { NginxRegex } from '../engine/nginx-regex.ts';
import type {
  AccessLogSpec,
  AccessRule,
  AddHeaderSpec,
  AnswerSpec,
  ApiRateLimitZoneSpec,
  ErrorPageSpec,
  GeoSpec,
  HeaderBuffersSpec,
  KeyvalSpec,
  KeyvalZoneSpec,
  LimitConnSpec,
  LimitConnZoneSpec,
  LimitExcept,
  LimitReqSpec,
  LimitReqZoneSpec,
  ListenSpec,
  LocationMatch,
  LogFormatSpec,
  MapSpec,
  NamedFile,
  PriorityLevelZoneSpec,
  ProxyHttpVersion,
  ProxySetHeader,
  RewriteStep,
  SourceRef,
  UpstreamQueueSpec,
  UpstreamServerSpec,
  UpstreamZoneSpec,
} from './model.ts';
import { newSslBuilder, type SslBuilder } from './ssl.ts';

/** Settings every level (http, server, location) can carry and inherit. */
export interface LevelBuilder {
  readonly source: SourceRef;
  limitReqs: LimitReqSpec[] | null;
  limitReqStatus: number | null;
  limitReqLogLevel: LogLevel | null;
  limitReqDryRun: boolean | null;
  limitReqRetryAfter: boolean | null;
  limitReqRateLimitHeaders: boolean | null;
  limitConns: LimitConnSpec[] | null;
  limitConnStatus: number | null;
  limitConnLogLevel: LogLevel | null;
  limitConnDryRun: boolean | null;
  /** `limit_conn_retry_after`: ms, `0` for off (null: not set here). */
  limitConnRetryAfterMs: number | null;
  apiRateLimit: { readonly zone: string; readonly source: SourceRef } | null;
  apiRateLimitStatus: number | null;
  priorityLevel: {
    readonly level: ComplexValue;
    readonly flow: ComplexValue | null;
    readonly source: SourceRef;
  } | null;
  priorityLevelStatus: number | null;
  priorityLevelLogLevel: LogLevel | null;
  priorityLevelDryRun: boolean | null;
  priorityLevelHeaders: boolean | null;
  realIpFrom: string[] | null;
  realIpHeader: string | null;
  realIpRecursive: boolean | null;
  access: AccessRule[] | null;
  proxyConnectTimeoutMs: number | null;
  proxyReadTimeoutMs: number | null;
  proxySendTimeoutMs: number | null;
  proxyHttpVersion: ProxyHttpVersion | null;
  proxySetHeaders: ProxySetHeader[] | null;
  /** `access_log` lines written at this level (`off`: none). */
  accessLogs: AccessLogSpec[] | null;
  /** `proxy_next_upstream*`, `proxy_pass_request_*` written at this level. */
  proxyRules: { -readonly [K in keyof ProxyRules]?: ProxyRules[K] } | null;
  /** `proxy_ssl_*` written at this level (proxy-ssl.ts). */
  proxySsl: ProxySslBuilder;
  addHeaders: AddHeaderSpec[] | null;
  /** `expires`, `limit_rate`, `limit_rate_after` set at this level (answer-filters.ts). */
  answer: { -readonly [K in keyof AnswerSpec]?: AnswerSpec[K] };
  rewriteLog: boolean | null;
  errorPages: ErrorPageSpec[] | null;
  recursiveErrorPages: boolean | null;
  /** `client_max_body_size`, bytes (0: no limit). */
  clientMaxBodySize: number | null;
  /** `client_header_buffer_size`, bytes (http and server only). */
  clientHeaderBufferSize: number | null;
  /** `large_client_header_buffers number size` (http and server only). */
  largeClientHeaderBuffers: HeaderBuffersSpec | null;
  /** `connection_pool_size`, bytes (http and server only; client.ts). */
  connectionPoolSize: number | null;
  /** The client connection's timers and buffering set at this level (client-connection.ts). */
  client: { -readonly [K in keyof ClientTimers]?: ClientTimers[K] };
  /** `root`/`alias`, `index`, `types`, `default_type` set at this level (static-files.ts). */
  files: StaticFilesBuilder;
}

/** The `proxy_ssl_*` settings a level writes, and where its certificate and key files were named. */
export type ProxySslBuilder = { -readonly [K in keyof ProxySslSettings]?: ProxySslSettings[K] } & {
  certificateFile?: NamedFile;
  certificateKeyFile?: NamedFile;
};

/** What a level sets of its static files; the http level's `defaultRoot` is nginx's `html`. */
export interface StaticFilesBuilder {
  documentRoot?: DocumentRoot;
  index?: string[];
  types?: Map<string, string>;
  defaultType?: string;
  defaultRoot?: string;
}

export interface LocationBuilder extends LevelBuilder {
  readonly match: LocationMatch;
  /** The URI or regex, without the modifier. */
  readonly pattern: string;
  readonly regex: NginxRegex | null;
  /** `location @name`: accepted, never part of the model (nothing can jump to it). */
  readonly named: boolean;
  readonly locations: LocationBuilder[];
  proxyPass: string | null;
  /** `limit_except`: the methods it lists and the block's `allow`/`deny` (null: none written there). */
  limitExcept: LimitExcept | null;
  /** The level's rewrite module script (rewrite-if.ts, location.ts's `return`). */
  readonly script: RewriteStep[];
  api: { readonly write: boolean } | null;
  /** `internal`: only internal redirects and rewrites reach it. */
  internal: boolean;
}

export interface ServerBuilder extends LevelBuilder {
  readonly listen: (ListenSpec & { readonly source: SourceRef })[];
  readonly ssl: SslBuilder;
  readonly serverNames: string[];
  readonly serverNameRegexes: NginxRegex[];
  readonly locations: LocationBuilder[];
  /** The level's rewrite module script (rewrite-if.ts, location.ts's `return`). */
  readonly script: RewriteStep[];
}

export interface UpstreamBuilder {
  readonly name: string;
  readonly servers: UpstreamServerSpec[];
  keepalive: number | null;
  keepaliveRequests: number | null;
  keepaliveTimeMs: number | null;
  keepaliveTimeoutMs: number | null;
  queue: UpstreamQueueSpec | null;
  zone: UpstreamZoneSpec | null;
  readonly source: SourceRef;
}

/** A shared memory zone name, as ngx_shared_memory_add tracks it. */
export interface SharedMemoryZone {
  readonly tag: 'limit_req' | 'limit_conn' | 'keyval';
  sizeBytes: number;
  /** Where the name was first used (for `zero size shared memory zone`). */
  readonly firstUse: SourceRef;
  /** The key of the zone directive that defined it, or `null` until one defines it. */
  definedKey: string | null;
}

export interface VariableUse {
  readonly name: string;
  readonly source: SourceRef;
}

/** A `proxy_pass` with a static host, checked against the upstreams once the http block is read. */
export interface ProxyTarget {
  readonly host: string;
  readonly port: number | null;
  readonly source: SourceRef;
}

export interface HttpBuilder extends LevelBuilder {
  readonly ssl: SslBuilder;
  readonly limitReqZones: LimitReqZoneSpec[];
  readonly limitConnZones: LimitConnZoneSpec[];
  readonly apiRateLimitZones: ApiRateLimitZoneSpec[];
  /** Every `api_rate_limit name` (checked against the zones once the http block is read). */
  readonly apiRateLimitUses: { readonly zone: string; readonly source: SourceRef }[];
  readonly priorityLevelZones: PriorityLevelZoneSpec[];
  /** Every `priority_level` (a literal level is checked against the zones once the http block is read). */
  readonly priorityLevelUses: { readonly level: ComplexValue; readonly source: SourceRef }[];
  priorityLevelConcurrency: number | null;
  readonly keyvalZones: KeyvalZoneSpec[];
  readonly keyvals: KeyvalSpec[];
  readonly maps: MapSpec[];
  readonly geos: GeoSpec[];
  readonly upstreams: UpstreamBuilder[];
  readonly servers: ServerBuilder[];
  readonly logFormats: LogFormatSpec[];
  readonly sharedMemory: Map<string, SharedMemoryZone>;
  /** Variables defined by map, geo, keyval or a named regex capture → the definition (last one wins). */
  readonly variables: Map<string, object>;
  readonly variableUses: VariableUse[];
  readonly proxyTargets: ProxyTarget[];
  /** `listen … default_server` addresses seen so far (`0.0.0.0:80`). */
  readonly defaultServers: Set<string>;
}

export function newLevel(source: SourceRef): LevelBuilder {
  return {
    source,
    limitReqs: null,
    limitReqStatus: null,
    limitReqLogLevel: null,
    limitReqDryRun: null,
    limitReqRetryAfter: null,
    limitReqRateLimitHeaders: null,
    limitConns: null,
    limitConnStatus: null,
    limitConnLogLevel: null,
    limitConnDryRun: null,
    limitConnRetryAfterMs: null,
    apiRateLimit: null,
    apiRateLimitStatus: null,
    priorityLevel: null,
    priorityLevelStatus: null,
    priorityLevelLogLevel: null,
    priorityLevelDryRun: null,
    priorityLevelHeaders: null,
    realIpFrom: null,
    realIpHeader: null,
    realIpRecursive: null,
    access: null,
    proxyConnectTimeoutMs: null,
    proxyReadTimeoutMs: null,
    proxySendTimeoutMs: null,
    proxyHttpVersion: null,
    proxySetHeaders: null,
    accessLogs: null,
    proxyRules: null,
    proxySsl: {},
    addHeaders: null,
    answer: {},
    rewriteLog: null,
    errorPages: null,
    recursiveErrorPages: null,
    clientMaxBodySize: null,
    clientHeaderBufferSize: null,
    largeClientHeaderBuffers: null,
    connectionPoolSize: null,
    client: {},
    files: {},
  };
}

export function newHttp(source: SourceRef): HttpBuilder {
  return {
    ...newLevel(source),
    ssl: newSslBuilder(),
    limitReqZones: [],
    limitConnZones: [],
    apiRateLimitZones: [],
    apiRateLimitUses: [],
    priorityLevelZones: [],
    priorityLevelUses: [],
    priorityLevelConcurrency: null,
    keyvalZones: [],
    keyvals: [],
    maps: [],
    geos: [],
    upstreams: [],
    servers: [],
    logFormats: [],
    sharedMemory: new Map(),
    variables: new Map(),
    variableUses: [],
    proxyTargets: [],
    defaultServers: new Set(),
  };
}

export function newServer(source: SourceRef): ServerBuilder {
  return {
    ...newLevel(source),
    listen: [],
    ssl: newSslBuilder(),
    serverNames: [],
    serverNameRegexes: [],
    locations: [],
    script: [],
  };
}

export function newLocation(
  source: SourceRef,
  match: LocationMatch,
  pattern: string,
  regex: NginxRegex | null,
  named: boolean,
): LocationBuilder {
  return {
    ...newLevel(source),
    match,
    pattern,
    regex,
    named,
    locations: [],
    proxyPass: null,
    limitExcept: null,
    internal: false,
    script: [],
    api: null,
  };
}
