/**
 * ngx_http_core_module's limits on how long a client connection may hold the server: the timeouts
 * (`client_header_timeout`, `client_body_timeout`, `send_timeout`), keep-alive (`keepalive_timeout`,
 * `keepalive_requests`, `keepalive_time`, `keepalive_disable`), the lingering close (`lingering_close`, `lingering_time`,
 * `lingering_timeout`), how a request body is read before it goes to a server
 * (`client_body_buffer_size`, `proxy_request_buffering`) and kept (`client_body_in_file_only`,
 * `client_body_in_single_buffer`, `client_body_temp_path`), and what the `Server` field says
 * (`server_tokens`) and how a redirect's `Location` is made absolute (`absolute_redirect`,
 * `server_name_in_redirect`, `port_in_redirect`); the `http2_*` directives nginx 1.19.7 made
 * obsolete, read with its warning. In an `upstream` block the `keepalive_*` names are the keepalive
 * module's (upstream.ts).
 */
import type { ClientTimers } from '../../engine/http/client-timers.ts';
import { KEEPALIVE_DISABLE_VALUES } from '../../engine/http/keepalive-disable.ts';
import { atoi, parseSize, parseTimeMs } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, flagArg, levelOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

type TimeField = {
  [K in keyof ClientTimers]: ClientTimers[K] extends number ? K : never;
}[keyof ClientTimers];

/** The level's client settings, checked for a second setting of `field` (nginx: "is duplicate"). */
function settingOnce(d: Directive, scope: Scope, field: keyof ClientTimers) {
  const client = levelOf(scope).client;
  if (client[field] !== undefined) throw duplicate(d);
  return client;
}

function msArg(d: Directive, text: string): number {
  const ms = parseTimeMs(text);
  if (ms === null) throw configError(`"${d.name}" directive invalid value`, d);
  return ms;
}

/** `name time;` — ngx_conf_set_msec_slot. */
function time(field: TimeField): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    settingOnce(d, scope, field)[field] = msArg(d, d.args[0]!);
  };
}

/** `keepalive_timeout timeout [header_timeout];` — the second is the `Keep-Alive: timeout=` value, s. */
function keepaliveTimeout(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'keepaliveTimeoutMs');
  client.keepaliveTimeoutMs = msArg(d, d.args[0]!);
  if (d.args.length === 2) {
    const ms = parseTimeMs(d.args[1]!);
    if (ms === null) throw configError(`invalid value "${d.args[1]}"`, d);
    client.keepaliveHeaderS = Math.floor(ms / 1000);
  }
}

/** `keepalive_requests number;` — ngx_conf_set_num_slot. */
function keepaliveRequests(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'keepaliveRequests');
  const n = atoi(d.args[0]!);
  if (n === null) throw configError(`"${d.name}" directive invalid number`, d);
  client.keepaliveRequests = n;
}

/** `lingering_close off | on | always;` — ngx_conf_set_enum_slot. */
function lingeringClose(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'lingeringClose');
  const value = d.args[0]!.toLowerCase();
  if (value !== 'off' && value !== 'on' && value !== 'always')
    throw configError(`invalid value "${d.args[0]}"`, d);
  client.lingeringClose = value;
}

/** `client_body_buffer_size size;` — ngx_conf_set_size_slot. */
function bodyBufferSize(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'bodyBufferBytes');
  const bytes = parseSize(d.args[0]!);
  if (bytes === null) throw configError(`"${d.name}" directive invalid value`, d);
  client.bodyBufferBytes = bytes;
}

/** `server_tokens on | off | build;` — ngx_conf_set_enum_slot; `build` names no build here, as `on`. */
function serverTokens(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'serverTokens');
  const value = d.args[0]!.toLowerCase();
  if (value !== 'on' && value !== 'off' && value !== 'build')
    throw configError(`invalid value "${d.args[0]}"`, d);
  client.serverTokens = value !== 'off';
}

/**
 * `keepalive_disable none | browser …;` — ngx_conf_set_bitmask_slot: a second one on the same level
 * adds its values, a value given again warns.
 */
function keepaliveDisable(d: Directive, scope: Scope): void {
  const client = levelOf(scope).client;
  let mask = client.keepaliveDisable ?? 0;
  for (const arg of d.args) {
    const bit = KEEPALIVE_DISABLE_VALUES[arg.toLowerCase()];
    if (bit === undefined) throw configError(`invalid value "${arg}"`, d);
    if ((mask & bit) !== 0) scope.session.warn(`duplicate value "${arg}"`, ref(d));
    mask |= bit;
  }
  client.keepaliveDisable = mask;
}

/** `client_body_in_file_only on | clean | off;` — ngx_conf_set_enum_slot. */
function bodyInFileOnly(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'bodyInFileOnly');
  const value = d.args[0]!.toLowerCase();
  if (value !== 'off' && value !== 'on' && value !== 'clean')
    throw configError(`invalid value "${d.args[0]}"`, d);
  client.bodyInFileOnly = value;
}

function bodyInSingleBuffer(d: Directive, scope: Scope): void {
  settingOnce(d, scope, 'bodyInSingleBuffer').bodyInSingleBuffer = flagArg(d);
}

/**
 * `client_body_temp_path path [l1 [l2 [l3]]];` — ngx_conf_set_path_slot: levels of 1 or more digits,
 * together no more than the file name's 10.
 */
function bodyTempPath(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'bodyTempPath');
  const invalid = () => configError(`"${d.name}" directive invalid value`, d);
  const levels = d.args.slice(1).map((text) => {
    const level = atoi(text);
    if (level === null || level === 0) throw invalid();
    return level;
  });
  if (levels.reduce((sum, level) => sum + level, 0) > 10) throw invalid();
  const path = d.args[0]!.endsWith('/') ? d.args[0]!.slice(0, -1) : d.args[0]!;
  client.bodyTempPath = { path: scope.session.fullPath(path), levels };
}

/** `http2_body_preread_size size;` — ngx_conf_set_size_slot, then ngx_http_v2_preread_size's bound. */
function h2BodyPrereadSize(d: Directive, scope: Scope): void {
  const client = settingOnce(d, scope, 'h2BodyPrereadBytes');
  const bytes = parseSize(d.args[0]!);
  if (bytes === null) throw configError(`"${d.name}" directive invalid value`, d);
  // NGX_HTTP_V2_MAX_WINDOW
  if (bytes > 2 ** 31 - 1) throw configError('the maximum body preread buffer size is 2147483647', d);
  client.h2BodyPrereadBytes = bytes;
}

/**
 * ngx_http_v2_obsolete: the directive is read, does nothing, and says which one took its place (the
 * HTTP/2 header limits are `large_client_header_buffers`', its timers and count the connection's).
 */
function obsoleteH2(insteadName: string): DirectiveSpec['handle'] {
  return (d, scope) =>
    scope.session.warn(
      `the "${d.name}" directive is obsolete, use the "${insteadName}" directive instead`,
      ref(d),
    );
}

const OBSOLETE_H2: readonly [string, string][] = [
  ['http2_recv_timeout', 'client_header_timeout'],
  ['http2_idle_timeout', 'keepalive_timeout'],
  ['http2_max_requests', 'keepalive_requests'],
  ['http2_max_field_size', 'large_client_header_buffers'],
  ['http2_max_header_size', 'large_client_header_buffers'],
];

function requestBuffering(d: Directive, scope: Scope): void {
  settingOnce(d, scope, 'requestBuffering').requestBuffering = flagArg(d);
}

type RedirectFlag = 'absoluteRedirect' | 'serverNameInRedirect' | 'portInRedirect';

/** `absolute_redirect`, `server_name_in_redirect`, `port_in_redirect` — ngx_conf_set_flag_slot. */
function redirectFlag(field: RedirectFlag): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    settingOnce(d, scope, field)[field] = flagArg(d);
  };
}

const HSL = ['http', 'server', 'location'] as const;

export const clientConnectionDirectives: readonly DirectiveSpec[] = [
  { name: 'client_header_timeout', contexts: ['http', 'server'], args: [1], handle: time('headerTimeoutMs') },
  { name: 'client_body_timeout', contexts: HSL, args: [1], handle: time('bodyTimeoutMs') },
  { name: 'send_timeout', contexts: HSL, args: [1], handle: time('sendTimeoutMs') },
  { name: 'keepalive_timeout', contexts: HSL, args: [1, 2], handle: keepaliveTimeout },
  { name: 'keepalive_requests', contexts: HSL, args: [1], handle: keepaliveRequests },
  { name: 'keepalive_time', contexts: HSL, args: [1], handle: time('keepaliveTimeMs') },
  { name: 'lingering_close', contexts: HSL, args: [1], handle: lingeringClose },
  { name: 'lingering_time', contexts: HSL, args: [1], handle: time('lingeringTimeMs') },
  { name: 'lingering_timeout', contexts: HSL, args: [1], handle: time('lingeringTimeoutMs') },
  { name: 'client_body_buffer_size', contexts: HSL, args: [1], handle: bodyBufferSize },
  { name: 'proxy_request_buffering', contexts: HSL, args: [1], handle: requestBuffering },
  { name: 'client_body_in_file_only', contexts: HSL, args: [1], handle: bodyInFileOnly },
  { name: 'client_body_in_single_buffer', contexts: HSL, args: [1], handle: bodyInSingleBuffer },
  { name: 'client_body_temp_path', contexts: HSL, args: [1, 2, 3, 4], handle: bodyTempPath },
  { name: 'http2_body_preread_size', contexts: ['http', 'server'], args: [1], handle: h2BodyPrereadSize },
  { name: 'server_tokens', contexts: HSL, args: [1], handle: serverTokens },
  { name: 'keepalive_disable', contexts: HSL, args: '1+', handle: keepaliveDisable },
  { name: 'absolute_redirect', contexts: HSL, args: [1], handle: redirectFlag('absoluteRedirect') },
  { name: 'server_name_in_redirect', contexts: HSL, args: [1], handle: redirectFlag('serverNameInRedirect') },
  { name: 'port_in_redirect', contexts: HSL, args: [1], handle: redirectFlag('portInRedirect') },
  ...OBSOLETE_H2.map(
    ([name, instead]): DirectiveSpec => ({
      name,
      contexts: ['http', 'server'],
      args: [1],
      handle: obsoleteH2(instead),
    }),
  ),
];
