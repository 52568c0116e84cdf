/**
 * Builds, from the validated model, the engine's {@link Site}. Given the previous site (a reload),
 * limit_req and limit_conn zones whose name, key and size are unchanged keep their state and counters
 * (nginx keeps the shared memory), with the new `rate=` applied; keyval zones keep their content (and,
 * of the same type and timeout, the memory they are shared through).
 *
 * Given an attachment instead (a worker thread's site), the zones are those of the site that shared
 * them (engine/http/site-memory.ts): its limit_req and limit_conn zones' state and counters, its
 * keyval zones read from their publications. Its API limiters and priority levels are its own but
 * unused: a worker's requests are admitted by the main thread's (replica/workers/admission-desk.ts).
 */

import { ApiLimiter } from '../engine/api-limiter/api-limiter.ts';
import { parseComplexValue } from '../engine/complex-value.ts';
import { type CompiledAddHeader, compileAddHeader } from '../engine/http/add-headers.ts';
import type {
  ApiRateLimitRule,
  LocationHandler,
  PriorityLevelRule,
} from '../engine/http/location-handler.ts';
import type { ProxySsl } from '../engine/http/proxy-ssl.ts';
import { type CompiledReturn, NO_SCRIPT } from '../engine/http/rewrite-script.ts';
import { Site } from '../engine/http/site.ts';
import type { SiteAttachment } from '../engine/http/site-memory.ts';
import type { SiteLocation, SiteServer } from '../engine/http/site-server.ts';
import { KeyvalZone } from '../engine/keyval/keyval-zone.ts';
import type { LimitConnPolicy, LimitConnRule } from '../engine/limit-conn/limit-conn.ts';
import { LimitConnZone } from '../engine/limit-conn/limit-conn-zone.ts';
import type { LimitReqPolicy, LimitReqRule } from '../engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../engine/limit-req/limit-req-zone.ts';
import { AccessList } from '../engine/net/access-list.ts';
import { buildPriorityLevels, type PriorityLevel } from '../engine/priority/priority-level.ts';
import { compileGeo } from '../engine/variables/geo-variable.ts';
import { compileMap } from '../engine/variables/map-variable.ts';
import type { RequestContext } from '../engine/variables/request-context.ts';
import { VariableTable } from '../engine/variables/variable-table.ts';
import { compileAccessLogs } from './compile-access-logs.ts';
import { compileAnswerRate, compileExpires } from './compile-answer.ts';
import { compileErrorPages } from './compile-error-pages.ts';
import { compileProxySetHeaders } from './compile-proxy-headers.ts';
import { compileScript, type ScriptCompiler, scriptVariables } from './compile-script.ts';
import { configError } from './config-error.ts';
import type {
  AddHeaderSpec,
  EffectiveApiRateLimit,
  EffectiveLimitConn,
  EffectiveLimitReq,
  EffectivePriorityLevel,
  HttpConf,
  LocationConf,
  ProxySslConf,
  ReturnSpec,
  ServerConf,
} from './model.ts';
import { proxiesUpgrades } from './proxy-upgrade.ts';
import { declareServerNameCaptures, serverNameSlots } from './server-name-captures.ts';
import { compileIndex } from './static-files-merge.ts';

export function buildSite(http: HttpConf, previous?: Site, attach?: SiteAttachment): Site {
  const shared = <M>(memories: ReadonlyMap<string, M> | undefined, name: string): M => {
    const memory = memories?.get(name);
    if (memory === undefined) throw new Error(`zone "${name}" was not shared with this worker`);
    return memory;
  };
  const variables = new VariableTable();
  for (const map of http.maps) variables.declare(map.variable);
  for (const geo of http.geos) variables.declare(geo.variable);
  for (const keyval of http.keyvals) variables.declare(keyval.variable);
  declareServerNameCaptures(http.servers, variables);
  for (const server of http.servers) declareScriptVariables(server, variables);

  const keyvalZones = new Map<string, KeyvalZone>();
  for (const spec of http.keyvalZones) {
    const old = previous?.keyvalZones.get(spec.name);
    if (old !== undefined && old.type === spec.type && old.timeoutMs === spec.timeoutMs) {
      keyvalZones.set(spec.name, old);
      continue;
    }
    const zone = new KeyvalZone(spec.name, spec.type, spec.timeoutMs);
    if (attach !== undefined) zone.readFrom(shared(attach.memory.keyval, spec.name));
    else if (old !== undefined) zone.replaceAll(old.entries());
    keyvalZones.set(spec.name, zone);
  }

  for (const map of http.maps) variables.define(map.variable, compileMap(map, variables), map.volatile);
  for (const geo of http.geos) variables.define(geo.variable, compileGeo(geo, variables));
  for (const keyval of http.keyvals) {
    const zone = keyvalZones.get(keyval.zone);
    if (zone === undefined) throw configError(`unknown keyval zone "${keyval.zone}"`, keyval.source);
    const key = variables.compile(keyval.key);
    variables.define(keyval.variable, (ctx) => zone.lookup(key(ctx), ctx.nowMs));
  }

  const limitReqZones = new Map<string, LimitReqZone>();
  for (const spec of http.limitReqZones) {
    const old = previous?.limitReqZones.get(spec.name);
    let zone: LimitReqZone;
    const kept =
      old !== undefined &&
      old.key.raw === spec.key.raw &&
      old.sizeBytes === spec.sizeBytes &&
      (old.sync !== null) === spec.sync;
    if (kept) {
      zone = old;
      zone.rateMilli = spec.rateMilli;
    } else {
      const memory = attach && { memory: shared(attach.memory.limitReq, spec.name), slice: attach.slice };
      zone = new LimitReqZone(spec.name, spec.key, spec.sizeBytes, spec.rateMilli, spec.sync, memory);
    }
    limitReqZones.set(spec.name, zone);
  }
  const keyOf = new Map([...limitReqZones].map(([name, zone]) => [name, variables.compile(zone.key)]));

  const policy = (conf: EffectiveLimitReq): LimitReqPolicy<RequestContext> => ({
    rules: conf.limits.map((limit): LimitReqRule<RequestContext> => {
      const zone = limitReqZones.get(limit.zone);
      if (zone === undefined) throw configError(`zero size shared memory zone "${limit.zone}"`, limit.source);
      return {
        zone,
        keyOf: keyOf.get(limit.zone)!,
        keyText: zone.key.raw,
        burstMilli: limit.burstMilli,
        delayMilli: limit.delayMilli,
      };
    }),
    status: conf.status,
    logLevel: conf.logLevel,
    dryRun: conf.dryRun,
    retryAfter: conf.retryAfter,
    rateLimitHeaders: conf.rateLimitHeaders,
  });

  const limitConnZones = new Map<string, LimitConnZone>();
  for (const spec of http.limitConnZones) {
    const old = previous?.limitConnZones.get(spec.name);
    const kept = old !== undefined && old.key.raw === spec.key.raw && old.sizeBytes === spec.sizeBytes;
    const memory = attach && { memory: shared(attach.memory.limitConn, spec.name), slice: attach.slice };
    limitConnZones.set(
      spec.name,
      kept ? old : new LimitConnZone(spec.name, spec.key, spec.sizeBytes, memory),
    );
  }
  const connKeyOf = new Map([...limitConnZones].map(([name, zone]) => [name, variables.compile(zone.key)]));

  const connPolicy = (conf: EffectiveLimitConn): LimitConnPolicy<RequestContext> => ({
    rules: conf.limits.map((limit): LimitConnRule<RequestContext> => {
      const zone = limitConnZones.get(limit.zone);
      if (zone === undefined) throw configError(`zero size shared memory zone "${limit.zone}"`, limit.source);
      return { zone, keyOf: connKeyOf.get(limit.zone)!, keyText: zone.key.raw, conn: limit.conn };
    }),
    status: conf.status,
    logLevel: conf.logLevel,
    dryRun: conf.dryRun,
    retryAfterMs: conf.retryAfterMs,
  });

  // A limiter whose options are unchanged keeps its state (its means, its adjusted values).
  const apiLimiters = new Map<string, ApiLimiter>();
  for (const spec of http.apiRateLimitZones) {
    const old = previous?.apiLimiters.get(spec.name);
    const kept = old !== undefined && JSON.stringify(old.configured) === JSON.stringify(spec.params);
    apiLimiters.set(spec.name, kept ? old : new ApiLimiter(spec.name, spec.params));
  }
  const apiRateLimit = (conf: EffectiveApiRateLimit): ApiRateLimitRule | null => {
    if (conf.zone === null) return null;
    const limiter = apiLimiters.get(conf.zone);
    if (limiter === undefined) throw configError(`unknown api_rate_limit_zone "${conf.zone}"`, conf.source!);
    return { limiter, status: conf.status };
  };

  // Levels whose specs and seats are unchanged keep their queues and counters across a reload.
  const freshLevels = buildPriorityLevels(http.priorityLevelZones, http.priorityLevelConcurrency);
  const priorityLevels = new Map<string, PriorityLevel>();
  for (const [name, level] of freshLevels) {
    const old = previous?.priorityLevels.get(name);
    const kept =
      old !== undefined &&
      old.seats === level.seats &&
      JSON.stringify(old.spec) === JSON.stringify(level.spec);
    priorityLevels.set(name, kept ? old : level);
  }
  const binaryRemoteAddr = variables.compile(parseComplexValue('$binary_remote_addr'));
  // a literal level naming no zone, and api_rate_limit beside it, are refused when the config loads
  const priorityLevel = (conf: EffectivePriorityLevel): PriorityLevelRule | null => {
    if (conf.level === null) return null;
    return {
      levelOf: variables.compile(conf.level),
      flowOf: conf.flow === null ? binaryRemoteAddr : variables.compile(conf.flow),
      levels: priorityLevels,
      status: conf.status,
      logLevel: conf.logLevel,
      dryRun: conf.dryRun,
      headers: conf.headers,
    };
  };

  const compileAddHeaders = (lines: readonly AddHeaderSpec[]): readonly CompiledAddHeader[] =>
    lines.map((l) =>
      compileAddHeader(l.name, l.value === null ? null : variables.compile(l.value), l.always),
    );

  const compileReturn = (spec: ReturnSpec): CompiledReturn => ({
    code: spec.code,
    text: spec.text === null ? null : variables.compile(spec.text),
  });
  const proxyPassOf = (url: string) => ({
    proxyPass: url,
    proxyPassUrl: url.includes('$') ? variables.compile(parseComplexValue(url)) : null,
    api: null,
  });
  // each level's settings compiled once: the locations that inherit them share one TLS context
  const proxySslCompiled = new WeakMap<ProxySslConf, ProxySsl>();
  const compileProxySsl = (conf: ProxySslConf): ProxySsl => {
    let compiled = proxySslCompiled.get(conf);
    if (compiled === undefined) {
      const name = conf.name === null ? null : variables.compile(parseComplexValue(conf.name));
      compiled = Object.freeze({ ...conf, name });
      proxySslCompiled.set(conf, compiled);
    }
    return compiled;
  };
  const scripts: ScriptCompiler = { variables, compileReturn, compileAddHeaders, proxyPassOf };

  const handler = (
    name: string,
    level: 'server' | 'location',
    conf: Pick<
      LocationConf,
      | 'limitReq'
      | 'limitConn'
      | 'apiRateLimit'
      | 'priorityLevel'
      | 'access'
      | 'realIp'
      | 'proxyTimeouts'
      | 'proxyHttpVersion'
      | 'proxySetHeaders'
      | 'accessLogs'
      | 'proxyRules'
      | 'proxySsl'
      | 'clientMaxBodyBytes'
      | 'client'
      | 'addHeaders'
      | 'answer'
      | 'files'
    > &
      Partial<LocationConf>,
  ): LocationHandler => {
    const own = baseHandler(name, conf);
    // the block's configuration: the location's, its access rules, no rewrite script (nginx merges none)
    const except = conf.limitExcept ?? null;
    const base: LocationHandler =
      except === null
        ? own
        : {
            ...own,
            limitExcept: {
              methods: new Set(except.methods),
              handler: {
                ...own,
                ...(except.proxyPass === null ? {} : proxyPassOf(except.proxyPass)),
                access: new AccessList(except.access ?? conf.access),
              },
            },
          };
    const script = conf.script ?? [];
    if (script.length === 0) return base;
    // a server's `if` blocks have no configuration the request keeps: FIND_CONFIG replaces it
    const compiled = compileScript(
      script,
      conf.rewriteLog ?? false,
      level === 'server' ? null : base,
      scripts,
    );
    return { ...base, script: compiled };
  };

  const baseHandler = (name: string, conf: Parameters<typeof handler>[2]): LocationHandler => ({
    name,
    limitReq: policy(conf.limitReq),
    limitConn: connPolicy(conf.limitConn),
    apiRateLimit: apiRateLimit(conf.apiRateLimit),
    priorityLevel: priorityLevel(conf.priorityLevel),
    script: NO_SCRIPT,
    internal: conf.internal ?? false,
    limitExcept: null,
    errorPages: compileErrorPages(conf.errorPages, conf.recursiveErrorPages, variables),
    proxyPass: conf.proxyPass ?? null,
    proxyPassUrl: conf.proxyPass?.includes('$') ? variables.compile(parseComplexValue(conf.proxyPass)) : null,
    api: conf.api ?? null,
    access: new AccessList(conf.access),
    realIp: conf.realIp,
    proxyTimeouts: conf.proxyTimeouts,
    proxyRules: conf.proxyRules,
    proxySsl: compileProxySsl(conf.proxySsl),
    accessLogs: compileAccessLogs(conf.accessLogs, variables),
    proxyHeaders: compileProxySetHeaders(conf.proxySetHeaders, variables),
    proxyUpgrade: proxiesUpgrades(conf),
    clientMaxBodyBytes: conf.clientMaxBodyBytes,
    client: conf.client,
    addHeaders: compileAddHeaders(conf.addHeaders),
    expires: compileExpires(conf.answer, variables),
    answerRate: compileAnswerRate(conf.answer, variables),
    files: compileIndex(conf.files, variables),
  });

  const location = (conf: LocationConf): SiteLocation => ({
    match: conf.match,
    pattern: conf.pattern,
    regex: conf.regex,
    locations: conf.locations.map(location),
    // clcf->auto_redirect, which proxy_pass sets on a location whose name ends in a slash
    autoRedirect: conf.proxyPass !== null && conf.regex === null && conf.pattern.endsWith('/'),
    handler: handler(
      `location ${conf.match === 'prefix' ? '' : `${conf.match} `}${conf.pattern}`,
      'location',
      conf,
    ),
  });

  const server = (conf: ServerConf): SiteServer => ({
    listen: conf.listen,
    serverNames: conf.serverNames,
    serverNameRegexes: conf.serverNameRegexes,
    serverNameSlots: serverNameSlots(conf, variables),
    locations: conf.locations.map(location),
    named: new Map(
      conf.namedLocations.map((l) => [l.pattern, handler(`location ${l.pattern}`, 'location', l)]),
    ),
    handler: handler('server', 'server', {
      script: conf.script,
      rewriteLog: conf.rewriteLog,
      errorPages: conf.errorPages,
      recursiveErrorPages: conf.recursiveErrorPages,
      limitReq: conf.limitReq,
      limitConn: conf.limitConn,
      apiRateLimit: conf.apiRateLimit,
      priorityLevel: conf.priorityLevel,
      access: conf.access,
      realIp: conf.realIp,
      proxyTimeouts: conf.proxyTimeouts,
      proxyHttpVersion: conf.proxyHttpVersion,
      proxySetHeaders: conf.proxySetHeaders,
      accessLogs: conf.accessLogs,
      proxyRules: conf.proxyRules,
      proxySsl: conf.proxySsl,
      clientMaxBodyBytes: conf.clientMaxBodyBytes,
      client: conf.client,
      addHeaders: conf.addHeaders,
      answer: conf.answer,
      files: conf.files,
    }),
    headerBuffers: {
      firstBytes: conf.clientHeaderBufferBytes,
      largeCount: conf.largeClientHeaderBuffers.count,
      largeBytes: conf.largeClientHeaderBuffers.bytes,
    },
    clientVerify: conf.ssl.verifyClient,
  });

  return new Site({
    servers: http.servers.map(server),
    variables,
    limitReqZones,
    limitConnZones,
    apiLimiters,
    priorityLevels,
    keyvalZones,
  });
}

/** `set` variables and named captures of every script, declared before any value reads them. */
function declareScriptVariables(level: ServerConf | LocationConf, variables: VariableTable): void {
  for (const name of scriptVariables(level.script)) variables.declare(name);
  for (const location of level.locations) declareScriptVariables(location, variables);
  if ('namedLocations' in level)
    for (const named of level.namedLocations) declareScriptVariables(named, variables);
}
