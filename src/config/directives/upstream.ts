/**
 * ngx_http_upstream_module: `upstream name { server host[:port] [weight=N]; … }`, and
 * ngx_http_upstream_keepalive_module's `keepalive N`, `keepalive_requests N`, `keepalive_time t` and
 * `keepalive_timeout t` in it, and NGINX Plus's `max_conns` + `queue`. Round robin with weights,
 * `backup` and `down` servers is all the replica does, so other balancing methods and server
 * parameters that would change the choice of server (`least_conn`, `drain`, …) are rejected as not
 * supported.
 */
import { parseHostPort, unixAddressOf, unixPathError } from '../../engine/net/address-text.ts';
import { atoi, parseSize, parseTimeMs } from '../../engine/scalar-values.ts';
import type { UpstreamBuilder } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, httpOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const UNSUPPORTED_PARAMS = /^(resolve|drain|service=.*|slow_start=.*|route=.*)$/;

function upstream(d: Directive, scope: Scope): void {
  const name = d.args[0]!;
  const http = httpOf(scope);
  if (http.upstreams.some((u) => u.name.toLowerCase() === name.toLowerCase()))
    throw configError(`duplicate upstream "${name}"`, d);
  const builder: UpstreamBuilder = {
    name,
    servers: [],
    keepalive: null,
    keepaliveRequests: null,
    keepaliveTimeMs: null,
    keepaliveTimeoutMs: null,
    queue: null,
    zone: null,
    source: ref(d),
  };
  http.upstreams.push(builder);
  const endLine = scope.session.walkBlock(d, { ...scope, kind: 'upstream', upstream: builder });
  if (builder.servers.length === 0)
    throw configError('no servers are inside upstream', { file: d.file, line: endLine });
  // backups alone: nginx's round robin has no primary server to start from
  if (builder.servers.every((server) => server.backup === true))
    throw configError(`no servers in upstream "${name}"`, d);
}

/**
 * `server address [weight=N] [max_fails=N] [fail_timeout=time] [max_conns=N] [backup] [down];` inside
 * `upstream`; the address is `host[:port]` or `unix:path`.
 */
function upstreamServer(d: Directive, scope: Scope): void {
  let weight = 1;
  let maxConns = 0;
  let backup = false;
  let down = false;
  let maxFails: number | null = 1;
  let failTimeoutMs: number | null = 10_000;
  for (const param of d.args.slice(1)) {
    const [name, value = ''] = splitParam(param);
    if (param === 'backup') backup = true;
    else if (param === 'down') down = true;
    else if (name === 'weight') {
      const n = atoi(value);
      if (n === null || n === 0) throw configError(`invalid parameter "${param}"`, d);
      weight = n;
    } else if (name === 'max_conns') {
      const n = atoi(value);
      if (n === null) throw configError(`invalid parameter "${param}"`, d);
      maxConns = n;
    } else if (name === 'max_fails') {
      maxFails = atoi(value);
      if (maxFails === null) throw configError(`invalid parameter "${param}"`, d);
    } else if (name === 'fail_timeout') {
      failTimeoutMs = parseTimeMs(value);
      if (failTimeoutMs === null) throw configError(`invalid parameter "${param}"`, d);
    } else if (UNSUPPORTED_PARAMS.test(param)) {
      throw configError(`the "${name}" parameter of "server" is not supported by limitswitch`, d);
    } else {
      throw configError(`invalid parameter "${param}"`, d);
    }
  }
  const { host, port } = serverAddress(d);
  scope.upstream!.servers.push({
    host,
    port,
    weight,
    ...(maxConns === 0 ? {} : { maxConns }),
    ...(backup ? { backup } : {}),
    ...(down ? { down } : {}),
    ...(maxFails === 1 ? {} : { maxFails }),
    ...(failTimeoutMs === 10_000 ? {} : { failTimeoutMs }),
  });
}

/**
 * `host[:port]` (port 80 when none), or `unix:path` (ngx_parse_unix_domain_url without a URI part: the
 * rest is the path), held as host `unix:path` with port 0, as nginx's AF_UNIX address has none.
 */
function serverAddress(d: Directive): { host: string; port: number } {
  const address = d.args[0]!;
  const unix = unixAddressOf(address);
  if (unix !== null) {
    const error = unixPathError(unix);
    if (error !== null) throw configError(`${error} in upstream "${address}"`, d);
    return { host: unix, port: 0 };
  }
  const parsed = parseHostPort(address, false);
  if (parsed.error !== undefined || parsed.host === null)
    throw configError(`${parsed.error ?? 'invalid host'} in upstream "${address}"`, d);
  return { host: parsed.host, port: parsed.port ?? 80 };
}

function splitParam(param: string): [string, string?] {
  const eq = param.indexOf('=');
  return eq === -1 ? [param] : [param.slice(0, eq), param.slice(eq + 1)];
}

/** `keepalive connections;` — idle connections kept for the group, per replica (nginx: per worker). */
function keepalive(d: Directive, scope: Scope): void {
  const upstream = scope.upstream!;
  if (upstream.keepalive !== null) throw duplicate(d);
  const n = atoi(d.args[0]!);
  if (n === null || n === 0) throw configError(`invalid value "${d.args[0]}" in "${d.name}" directive`, d);
  upstream.keepalive = n;
}

/** `keepalive_requests number;` — ngx_conf_set_num_slot. */
function keepaliveRequests(d: Directive, scope: Scope): void {
  const upstream = scope.upstream!;
  if (upstream.keepaliveRequests !== null) throw duplicate(d);
  const n = atoi(d.args[0]!);
  if (n === null) throw configError(`"${d.name}" directive invalid number`, d);
  upstream.keepaliveRequests = n;
}

/** `keepalive_time time;` and `keepalive_timeout time;` (one argument here) — ngx_conf_set_msec_slot. */
function keepaliveMs(field: 'keepaliveTimeMs' | 'keepaliveTimeoutMs'): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    const upstream = scope.upstream!;
    if (upstream[field] !== null) throw duplicate(d);
    const ms = parseTimeMs(d.args[0]!);
    if (ms === null) throw configError(`"${d.name}" directive invalid value`, d);
    upstream[field] = ms;
  };
}

/**
 * NGINX Plus's `queue number [timeout=time];`: a request no server can take at once (each at its
 * `max_conns`, or down) waits for one, at most `number` of them and for `timeout` (60s) each.
 */
function queue(d: Directive, scope: Scope): void {
  const upstream = scope.upstream!;
  if (upstream.queue !== null) throw duplicate(d);
  const size = atoi(d.args[0]!);
  if (size === null || size === 0)
    throw configError(`invalid value "${d.args[0]}" in "${d.name}" directive`, d);
  let timeoutMs = 60_000;
  for (const param of d.args.slice(1)) {
    const [name, value = ''] = splitParam(param);
    const ms = name === 'timeout' ? parseTimeMs(value) : null;
    if (ms === null) throw configError(`invalid parameter "${param}"`, d);
    timeoutMs = ms;
  }
  upstream.queue = { size, timeoutMs };
}

/**
 * `zone name [size];`: in nginx, the group's state (peers' connections and failures, `max_conns`,
 * the queue) is then shared by the workers. Recorded so that, with worker threads, what it would
 * share and they do not yet is refused (replica/workers/worker-zones.ts).
 */
function zone(d: Directive, scope: Scope): void {
  const upstream = scope.upstream!;
  if (upstream.zone !== null) throw duplicate(d);
  const size = d.args[1];
  if (size !== undefined && parseSize(size) === null) throw configError(`invalid zone size "${size}"`, d);
  upstream.zone = { name: d.args[0]!, source: ref(d) };
}

export const upstreamDirectives: readonly DirectiveSpec[] = [
  { name: 'upstream', contexts: ['http'], block: true, args: [1], handle: upstream },
  { name: 'server', contexts: ['upstream'], args: '1+', handle: upstreamServer },
  { name: 'keepalive', contexts: ['upstream'], args: [1], handle: keepalive },
  { name: 'keepalive_requests', contexts: ['upstream'], args: [1], handle: keepaliveRequests },
  { name: 'keepalive_time', contexts: ['upstream'], args: [1], handle: keepaliveMs('keepaliveTimeMs') },
  { name: 'keepalive_timeout', contexts: ['upstream'], args: [1], handle: keepaliveMs('keepaliveTimeoutMs') },
  { name: 'queue', contexts: ['upstream'], args: [1, 2], handle: queue },
  { name: 'zone', contexts: ['upstream'], args: [1, 2], handle: zone },
];
