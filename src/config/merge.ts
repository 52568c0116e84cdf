/**
 * Inheritance, as nginx's merge_loc_conf functions do it, from builders into the frozen model:
 * - `limit_req`, `limit_conn`: a level's list replaces the enclosing one only when the level has any;
 * - `limit_req_status`, `_log_level`, `_dry_run`, `_retry_after`, `_ratelimit_headers`,
 *   `limit_conn_status`, `_log_level`,
 *   `_dry_run`, `_retry_after`, `real_ip_header`,
 *   `real_ip_recursive`: the innermost level that sets one wins;
 * - `proxy_connect_timeout`, `proxy_read_timeout`, `proxy_send_timeout`: the innermost level wins (60 s);
 *   so does `proxy_http_version` (1.0);
 * - `set_real_ip_from`, `allow`/`deny`, `proxy_set_header` and `add_header`: a level's list is used
 *   only when it has one, else inherited; `expires`, `limit_rate`, `limit_rate_after`: each the innermost;
 * - `client_max_body_size` (1m), and on servers `client_header_buffer_size` (1k) and
 *   `large_client_header_buffers` (4 8k): the innermost level wins; so does each of the client
 *   connection's timers and buffering settings (client-connection.ts), one by one.
 * Nested locations inherit from their enclosing location. Defaults: status 503, level `error`,
 * dry run off, header `X-Real-IP`; `listen *:80` and `server_name ""` for a server that has none.
 */
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../engine/http/client-timers.ts';
import { EXPIRES_OFF } from '../engine/http/expires.ts';
import { DEFAULT_PROXY_RULES, mergeProxyRules, type ProxyRules } from '../engine/http/proxy-rules.ts';
import { DEFAULT_INDEX, NGINX_DEFAULT_TYPES, type StaticFiles } from '../engine/http/static-files.ts';
import type { HttpBuilder, LevelBuilder, LocationBuilder, ServerBuilder } from './builders.ts';
import { configError } from './config-error.ts';
import type {
  AccessLogSpec,
  AccessRule,
  AddHeaderSpec,
  AnswerSpec,
  EffectiveApiRateLimit,
  EffectiveLimitConn,
  EffectiveLimitReq,
  EffectivePriorityLevel,
  ErrorPageSpec,
  HeaderBuffersSpec,
  HttpConf,
  ListenSpec,
  LocationConf,
  ProxyHttpVersion,
  ProxySetHeader,
  ProxySslConf,
  ProxyTimeouts,
  RealIpConf,
  ServerConf,
} from './model.ts';
import {
  checkProxySsl,
  DEFAULT_PROXY_SSL_CONF,
  inheritProxySsl,
  locationMayBeTls,
} from './proxy-ssl-merge.ts';
import { checkSslDefaultServer, mergeSsl } from './ssl.ts';
import { inheritFiles } from './static-files-merge.ts';

interface Inherited {
  readonly limitReq: EffectiveLimitReq;
  readonly limitConn: EffectiveLimitConn;
  readonly apiRateLimit: EffectiveApiRateLimit;
  readonly priorityLevel: EffectivePriorityLevel;
  readonly access: readonly AccessRule[];
  readonly realIp: RealIpConf;
  readonly proxyTimeouts: ProxyTimeouts;
  readonly proxyHttpVersion: ProxyHttpVersion;
  readonly proxySetHeaders: readonly ProxySetHeader[];
  readonly accessLogs: readonly AccessLogSpec[];
  readonly proxyRules: ProxyRules;
  readonly proxySsl: ProxySslConf;
  readonly addHeaders: readonly AddHeaderSpec[];
  readonly answer: AnswerSpec;
  readonly rewriteLog: boolean;
  readonly errorPages: readonly ErrorPageSpec[];
  readonly recursiveErrorPages: boolean;
  readonly clientMaxBodyBytes: number;
  readonly clientHeaderBufferBytes: number;
  readonly largeClientHeaderBuffers: HeaderBuffersSpec;
  readonly client: ClientTimers;
  readonly files: StaticFiles;
}

/** nginx's defaults for the client request limits (ngx_http_core_module). */
export const CLIENT_MAX_BODY_BYTES = 1024 * 1024;
export const CLIENT_HEADER_BUFFER_BYTES = 1024;
export const LARGE_CLIENT_HEADER_BUFFERS: HeaderBuffersSpec = Object.freeze({ count: 4, bytes: 8192 });

const DEFAULTS: Inherited = {
  limitReq: {
    limits: [],
    status: 503,
    logLevel: 'error',
    dryRun: false,
    retryAfter: false,
    rateLimitHeaders: false,
  },
  limitConn: { limits: [], status: 503, logLevel: 'error', dryRun: false, retryAfterMs: null },
  apiRateLimit: { zone: null, status: 429, source: null },
  priorityLevel: {
    level: null,
    flow: null,
    status: 429,
    logLevel: 'error',
    dryRun: false,
    headers: false,
    source: null,
  },
  access: [],
  realIp: { trustedFrom: [], header: 'X-Real-IP', recursive: false },
  proxyTimeouts: { connectMs: 60_000, readMs: 60_000, sendMs: 60_000 },
  proxyHttpVersion: '1.0',
  proxySetHeaders: [],
  accessLogs: [],
  proxyRules: DEFAULT_PROXY_RULES,
  proxySsl: DEFAULT_PROXY_SSL_CONF,
  addHeaders: [],
  answer: { expires: { ...EXPIRES_OFF, value: null }, limitRate: null, limitRateAfter: null },
  rewriteLog: false,
  errorPages: [],
  recursiveErrorPages: false,
  clientMaxBodyBytes: CLIENT_MAX_BODY_BYTES,
  clientHeaderBufferBytes: CLIENT_HEADER_BUFFER_BYTES,
  largeClientHeaderBuffers: LARGE_CLIENT_HEADER_BUFFERS,
  client: NGINX_CLIENT_TIMERS,
  files: {
    documentRoot: { path: 'html', alias: null },
    index: DEFAULT_INDEX,
    types: NGINX_DEFAULT_TYPES,
    defaultType: 'text/plain',
  },
};

/** The settings in force at `level` given those of the enclosing level. */
export function inherit(level: LevelBuilder, parent: Inherited): Inherited {
  return {
    limitReq: {
      limits: level.limitReqs ?? parent.limitReq.limits,
      status: level.limitReqStatus ?? parent.limitReq.status,
      logLevel: level.limitReqLogLevel ?? parent.limitReq.logLevel,
      dryRun: level.limitReqDryRun ?? parent.limitReq.dryRun,
      retryAfter: level.limitReqRetryAfter ?? parent.limitReq.retryAfter,
      rateLimitHeaders: level.limitReqRateLimitHeaders ?? parent.limitReq.rateLimitHeaders,
    },
    limitConn: {
      limits: level.limitConns ?? parent.limitConn.limits,
      status: level.limitConnStatus ?? parent.limitConn.status,
      logLevel: level.limitConnLogLevel ?? parent.limitConn.logLevel,
      dryRun: level.limitConnDryRun ?? parent.limitConn.dryRun,
      retryAfterMs:
        level.limitConnRetryAfterMs === null
          ? parent.limitConn.retryAfterMs
          : level.limitConnRetryAfterMs || null,
    },
    apiRateLimit: {
      zone: level.apiRateLimit?.zone ?? parent.apiRateLimit.zone,
      status: level.apiRateLimitStatus ?? parent.apiRateLimit.status,
      source: level.apiRateLimit?.source ?? parent.apiRateLimit.source,
    },
    priorityLevel: {
      level: level.priorityLevel?.level ?? parent.priorityLevel.level,
      flow: level.priorityLevel === null ? parent.priorityLevel.flow : level.priorityLevel.flow,
      status: level.priorityLevelStatus ?? parent.priorityLevel.status,
      logLevel: level.priorityLevelLogLevel ?? parent.priorityLevel.logLevel,
      dryRun: level.priorityLevelDryRun ?? parent.priorityLevel.dryRun,
      headers: level.priorityLevelHeaders ?? parent.priorityLevel.headers,
      source: level.priorityLevel?.source ?? parent.priorityLevel.source,
    },
    access: level.access ?? parent.access,
    realIp: {
      trustedFrom: level.realIpFrom ?? parent.realIp.trustedFrom,
      header: level.realIpHeader ?? parent.realIp.header,
      recursive: level.realIpRecursive ?? parent.realIp.recursive,
    },
    proxyTimeouts: {
      connectMs: level.proxyConnectTimeoutMs ?? parent.proxyTimeouts.connectMs,
      readMs: level.proxyReadTimeoutMs ?? parent.proxyTimeouts.readMs,
      sendMs: level.proxySendTimeoutMs ?? parent.proxyTimeouts.sendMs,
    },
    proxyHttpVersion: level.proxyHttpVersion ?? parent.proxyHttpVersion,
    proxySetHeaders: level.proxySetHeaders ?? parent.proxySetHeaders,
    accessLogs: level.accessLogs ?? parent.accessLogs,
    proxyRules: mergeProxyRules(level.proxyRules, parent.proxyRules),
    proxySsl: inheritProxySsl(level.proxySsl, parent.proxySsl),
    addHeaders: level.addHeaders ?? parent.addHeaders,
    answer:
      Object.keys(level.answer).length === 0
        ? parent.answer
        : Object.freeze({ ...parent.answer, ...level.answer }),
    rewriteLog: level.rewriteLog ?? parent.rewriteLog,
    errorPages: level.errorPages ?? parent.errorPages,
    recursiveErrorPages: level.recursiveErrorPages ?? parent.recursiveErrorPages,
    clientMaxBodyBytes: level.clientMaxBodySize ?? parent.clientMaxBodyBytes,
    clientHeaderBufferBytes: level.clientHeaderBufferSize ?? parent.clientHeaderBufferBytes,
    largeClientHeaderBuffers: level.largeClientHeaderBuffers ?? parent.largeClientHeaderBuffers,
    client:
      Object.keys(level.client).length === 0
        ? parent.client
        : Object.freeze({ ...parent.client, ...level.client }),
    files: inheritFiles(level.files, parent.files),
  };
}

export function buildHttpConf(http: HttpBuilder): HttpConf {
  const defaultRoot = http.files.defaultRoot;
  const defaults: Inherited =
    defaultRoot === undefined
      ? DEFAULTS
      : { ...DEFAULTS, files: { ...DEFAULTS.files, documentRoot: { path: defaultRoot, alias: null } } };
  const root = inherit(http, defaults);
  // a variable defined twice belongs to its last definition (nginx's changeable variables)
  const owns = (spec: object & { readonly variable: string }): boolean =>
    http.variables.get(spec.variable) === spec;
  return {
    limitReqZones: http.limitReqZones,
    limitConnZones: http.limitConnZones,
    apiRateLimitZones: http.apiRateLimitZones,
    priorityLevelZones: http.priorityLevelZones,
    priorityLevelConcurrency: http.priorityLevelConcurrency ?? 600,
    keyvalZones: http.keyvalZones,
    keyvals: http.keyvals.filter(owns),
    maps: http.maps.filter(owns),
    geos: http.geos.filter(owns),
    upstreams: http.upstreams.map((upstream) => ({
      name: upstream.name,
      servers: upstream.servers,
      keepalive: upstream.keepalive,
      // ngx_http_upstream_init_keepalive's defaults
      keepaliveRequests: upstream.keepaliveRequests ?? 1000,
      keepaliveTimeMs: upstream.keepaliveTimeMs ?? 3_600_000,
      keepaliveTimeoutMs: upstream.keepaliveTimeoutMs ?? 60_000,
      queue: upstream.queue,
      ...(upstream.zone === null ? {} : { zone: upstream.zone }),
      source: upstream.source,
    })),
    servers: withSslAddresses(http.servers.map((server) => buildServer(server, root, http))),
    logFormats: http.logFormats,
  };
}

/**
 * `ssl` and `http2` belong to an address, not to one `listen` line: a server that names the address
 * without them serves it with TLS too (ngx_http_add_addresses ORs the options). Every server on a TLS
 * address then needs its certificate; the default server's settings make the handshake.
 */
function withSslAddresses(servers: ServerConf[]): ServerConf[] {
  const ssl = new Set<string>();
  const http2 = new Set<string>();
  const key = (l: ListenSpec): string => `${l.host ?? '*'}:${l.port}`;
  for (const server of servers) {
    for (const l of server.listen) {
      if (l.ssl) ssl.add(key(l));
      if (l.http2 || server.ssl.http2) http2.add(key(l));
    }
  }
  if (ssl.size === 0 && http2.size === 0) return servers;
  const defaults = new Map<string, ServerConf>();
  for (const server of servers) {
    for (const l of server.listen) {
      if (!defaults.has(key(l)) || l.defaultServer) defaults.set(key(l), server);
    }
  }
  for (const address of ssl) checkSslDefaultServer(defaults.get(address)!);
  return servers.map((server) => {
    const listen = server.listen.map((l) => ({ ...l, ssl: ssl.has(key(l)), http2: http2.has(key(l)) }));
    return { ...server, listen };
  });
}

/** The extensions that admit a proxied request one way each: not both in force at one level. */
function checkAdmission(settings: Inherited): void {
  if (settings.priorityLevel.level !== null && settings.apiRateLimit.zone !== null) {
    throw configError(
      '"priority_level" and "api_rate_limit" cannot be used at the same level',
      settings.priorityLevel.source!,
    );
  }
}

function buildServer(server: ServerBuilder, parent: Inherited, http: HttpBuilder): ServerConf {
  const settings = inherit(server, parent);
  checkAdmission(settings);
  const ssl = mergeSsl(server.ssl, http.ssl, server.source);
  return {
    listen: server.listen.length
      ? server.listen.map(({ host, port, defaultServer, ssl, http2 }) => ({
          host,
          port,
          defaultServer,
          ssl,
          http2,
        }))
      : [{ host: null, port: 80, defaultServer: false, ssl: false, http2: false }],
    ssl,
    serverNames: server.serverNames.length ? server.serverNames : [''],
    serverNameRegexes: server.serverNameRegexes,
    locations: buildLocations(server.locations, settings),
    script: server.script,
    namedLocations: server.locations
      .filter((location) => location.named)
      .map((location) => buildLocation(location, settings)),
    ...settings,
    source: server.source,
  };
}

function buildLocations(locations: readonly LocationBuilder[], parent: Inherited): LocationConf[] {
  return locations.filter((location) => !location.named).map((location) => buildLocation(location, parent));
}

function buildLocation(location: LocationBuilder, parent: Inherited): LocationConf {
  const settings = inherit(location, parent);
  checkAdmission(settings);
  if (locationMayBeTls(location)) checkProxySsl(settings.proxySsl, location);
  return {
    match: location.match,
    pattern: location.pattern,
    regex: location.regex,
    locations: buildLocations(location.locations, settings),
    limitReq: settings.limitReq,
    limitConn: settings.limitConn,
    apiRateLimit: settings.apiRateLimit,
    priorityLevel: settings.priorityLevel,
    proxyPass: location.proxyPass,
    script: location.script,
    limitExcept: location.limitExcept,
    internal: location.internal,
    rewriteLog: settings.rewriteLog,
    errorPages: settings.errorPages,
    recursiveErrorPages: settings.recursiveErrorPages,
    api: location.api,
    access: settings.access,
    realIp: settings.realIp,
    proxyTimeouts: settings.proxyTimeouts,
    proxyHttpVersion: settings.proxyHttpVersion,
    proxySetHeaders: settings.proxySetHeaders,
    accessLogs: settings.accessLogs,
    proxyRules: settings.proxyRules,
    proxySsl: settings.proxySsl,
    addHeaders: settings.addHeaders,
    answer: settings.answer,
    clientMaxBodyBytes: settings.clientMaxBodyBytes,
    client: settings.client,
    files: settings.files,
    source: location.source,
  };
}

/** An empty http block, for a configuration without one. */
export function emptyHttpConf(): HttpConf {
  return {
    limitReqZones: [],
    limitConnZones: [],
    apiRateLimitZones: [],
    priorityLevelZones: [],
    priorityLevelConcurrency: 600,
    keyvalZones: [],
    keyvals: [],
    maps: [],
    geos: [],
    upstreams: [],
    servers: [],
    logFormats: [],
  };
}
