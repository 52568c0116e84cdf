/**
 * ngx_http_core_module's limits on what a client may send: `client_max_body_size` (http, server,
 * location; ngx_conf_set_off_slot), `client_header_buffer_size` (ngx_conf_set_size_slot) and
 * `large_client_header_buffers` (ngx_conf_set_bufs_slot), both http and server. The replica answers
 * as nginx does past them: 413, and 414 / 400 "Request Header Or Cookie Too Large".
 * `connection_pool_size` (http, server) sizes the first allocation of nginx's per-connection memory
 * pool, which grows as it needs: it bounds nothing a client sees, and the replica has no such pool.
 * It is read and checked as nginx checks it, and the large header buffers must hold it.
 */

import { atoi, parseOffset, parseSize } from '../../engine/scalar-values.ts';
import { type ConfigError, configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, levelOf } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** nginx's `"name" directive invalid value` (a slot handler returning "invalid value"). */
function invalidValue(d: Directive): ConfigError {
  return configError(`"${d.name}" directive invalid value`, d);
}

/** `client_max_body_size size;` — `0` turns the check off. */
function clientMaxBodySize(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.clientMaxBodySize !== null) throw duplicate(d);
  const bytes = parseOffset(d.args[0]!);
  if (bytes === null) throw invalidValue(d);
  level.clientMaxBodySize = bytes;
}

/** `client_header_buffer_size size;` */
function clientHeaderBufferSize(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.clientHeaderBufferSize !== null) throw duplicate(d);
  const bytes = parseSize(d.args[0]!);
  if (bytes === null) throw invalidValue(d);
  level.clientHeaderBufferSize = bytes;
}

/** `large_client_header_buffers number size;` — neither may be 0. */
function largeClientHeaderBuffers(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.largeClientHeaderBuffers !== null) throw duplicate(d);
  const count = atoi(d.args[0]!);
  if (count === null || count === 0) throw invalidValue(d);
  const bytes = parseSize(d.args[1]!);
  if (bytes === null || bytes === 0) throw invalidValue(d);
  level.largeClientHeaderBuffers = { count, bytes };
}

/** ngx_pool_t and two large-block links, aligned: nginx's NGX_MIN_POOL_SIZE on 64-bit. */
const MIN_POOL_BYTES = 112;
/** NGX_POOL_ALIGNMENT. */
const POOL_ALIGNMENT_BYTES = 16;

/** `connection_pool_size size;` — ngx_conf_set_size_slot with ngx_http_core_pool_size's checks. */
function connectionPoolSize(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.connectionPoolSize !== null) throw duplicate(d);
  const bytes = parseSize(d.args[0]!);
  if (bytes === null) throw invalidValue(d);
  if (bytes < MIN_POOL_BYTES) throw configError(`the pool size must be no less than ${MIN_POOL_BYTES}`, d);
  if (bytes % POOL_ALIGNMENT_BYTES !== 0)
    throw configError(`the pool size must be a multiple of ${POOL_ALIGNMENT_BYTES}`, d);
  level.connectionPoolSize = bytes;
}

export const clientDirectives: readonly DirectiveSpec[] = [
  {
    name: 'client_max_body_size',
    contexts: ['http', 'server', 'location'],
    args: [1],
    handle: clientMaxBodySize,
  },
  {
    name: 'client_header_buffer_size',
    contexts: ['http', 'server'],
    args: [1],
    handle: clientHeaderBufferSize,
  },
  {
    name: 'large_client_header_buffers',
    contexts: ['http', 'server'],
    args: [2],
    handle: largeClientHeaderBuffers,
  },
  { name: 'connection_pool_size', contexts: ['http', 'server'], args: [1], handle: connectionPoolSize },
];
