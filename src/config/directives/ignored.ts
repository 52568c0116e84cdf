/**
 * The one list of directives limitswitch accepts and ignores: they tune logging, buffering, timeouts,
 * TLS, compression or file-serving details, and none of them changes which requests are limited. Each keeps
 * nginx's contexts and argument counts, so misplaced or malformed ones are still reported.
 * Anything not here, not supported and not unsupported is an `unknown directive`.
 */
import type { ArgSpec, ContextKind, DirectiveSpec } from './types.ts';

const M: readonly ContextKind[] = ['main'];
const E: readonly ContextKind[] = ['events'];
const H: readonly ContextKind[] = ['http'];
const HS: readonly ContextKind[] = ['http', 'server'];
const HSL: readonly ContextKind[] = ['http', 'server', 'location'];
const SL: readonly ContextKind[] = ['server', 'location'];

const ENTRIES: readonly (readonly [string, readonly ContextKind[], ArgSpec])[] = [
  // main and events: process management
  ['daemon', M, [1]],
  ['master_process', M, [1]],
  ['pid', M, [1]],
  ['worker_rlimit_nofile', M, [1]],
  ['user', M, [1, 2]],
  ['worker_cpu_affinity', M, '1+'],
  ['worker_priority', M, [1]],
  ['worker_shutdown_timeout', M, [1]],
  ['timer_resolution', M, [1]],
  ['pcre_jit', M, [1]],
  ['env', M, [1]],
  ['load_module', M, [1]],
  ['working_directory', M, [1]],
  ['lock_file', M, [1]],
  ['error_log', [...M, ...HSL], '1+'],
  ['worker_connections', E, [1]],
  ['use', E, [1]],
  ['multi_accept', E, [1]],
  ['accept_mutex', E, [1]],
  ['accept_mutex_delay', E, [1]],
  ['worker_aio_requests', E, [1]],
  // logging
  ['log_not_found', HSL, [1]],
  ['log_subrequest', HSL, [1]],
  ['open_log_file_cache', HSL, [1, 2, 3, 4]],
  ['status_zone', SL, [1]],
  // proxying details (proxy_pass itself is supported)
  ['proxy_buffering', HSL, [1]],
  ['proxy_buffers', HSL, [2]],
  ['proxy_buffer_size', HSL, [1]],
  ['proxy_busy_buffers_size', HSL, [1]],
  ['proxy_max_temp_file_size', HSL, [1]],
  ['proxy_temp_file_write_size', HSL, [1]],
  ['proxy_socket_keepalive', HSL, [1]],
  ['proxy_temp_path', HSL, [1, 2, 3, 4]],
  ['fastcgi_temp_path', HSL, [1, 2, 3, 4]],
  ['uwsgi_temp_path', HSL, [1, 2, 3, 4]],
  ['scgi_temp_path', HSL, [1, 2, 3, 4]],
  // client connections (the timers that bound them are honoured: client-connection.ts)
  ['reset_timedout_connection', HSL, [1]],
  ['underscores_in_headers', HS, [1]],
  ['ignore_invalid_headers', HS, [1]],
  ['resolver', HSL, '1+'],
  ['resolver_timeout', HSL, [1]],
  // responses and file serving
  ['types_hash_max_size', HSL, [1]],
  ['types_hash_bucket_size', HSL, [1]],
  ['charset', HSL, [1]],
  ['source_charset', HSL, [1]],
  ['charset_types', HSL, '1+'],
  ['gzip', HSL, [1]],
  ['chunked_transfer_encoding', HSL, [1]],
  ['msie_padding', HSL, [1]],
  ['msie_refresh', HSL, [1]],
  ['sendfile', HSL, [1]],
  ['sendfile_max_chunk', HSL, [1]],
  ['tcp_nopush', HSL, [1]],
  ['tcp_nodelay', HSL, [1]],
  ['aio', HSL, [1]],
  ['directio', HSL, [1]],
  ['output_buffers', HSL, [2]],
  ['postpone_output', HSL, [1]],
  // hash sizing
  ['server_names_hash_bucket_size', H, [1]],
  ['server_names_hash_max_size', H, [1]],
  ['map_hash_bucket_size', H, [1]],
  ['map_hash_max_size', H, [1]],
  ['variables_hash_bucket_size', H, [1]],
  ['variables_hash_max_size', H, [1]],
  // upstream
];

/** Families ignored by prefix: `gzip_*`, `open_file_cache*`. */
const FAMILIES: readonly (readonly [string, readonly ContextKind[]])[] = [
  ['gzip_', HSL],
  ['open_file_cache', HSL],
];

const ignore = (): void => {};

export const ignoredDirectives: readonly DirectiveSpec[] = [
  ...ENTRIES.map(([name, contexts, args]) => ({ name, contexts, args, handle: ignore })),
];

/** The ignored family a name belongs to, as a directive spec, or `undefined`. */
export function ignoredFamily(name: string): DirectiveSpec | undefined {
  const family = FAMILIES.find(([prefix]) => name.startsWith(prefix));
  return family && { name, contexts: family[1], args: 'any', handle: ignore };
}

/** For documentation and tests: every ignored name, families written as `prefix*`. */
export const IGNORED_NAMES: readonly string[] = [
  ...ignoredDirectives.map((spec) => spec.name),
  ...FAMILIES.map(([prefix]) => `${prefix}*`),
];
