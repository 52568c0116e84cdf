import { isLateVariable } from './late-variables.ts';

/**
 * The built-in variables the engine can evaluate. The config layer uses these lists to reject unknown
 * variables at load time (`unknown "name" variable`), as nginx does.
 */

/** Exact names, without `$`. */
export const BUILTIN_VARIABLES: ReadonlySet<string> = new Set([
  'binary_remote_addr',
  'remote_addr',
  'remote_port',
  'realip_remote_addr',
  'realip_remote_port',
  'uri',
  'document_uri',
  'request_uri',
  'args',
  'query_string',
  'is_args',
  'host',
  'hostname',
  'server_name',
  'server_port',
  'server_addr',
  'request_method',
  'scheme',
  'https',
  'request_id',
  'limit_req_status',
  'limit_conn_status',
  'msec',
  'proxy_add_x_forwarded_for',
  'request_body',
  'request_body_file',
  'content_type',
  'content_length',
  'server_protocol',
  'ssl_protocol',
  'ssl_cipher',
  'ssl_server_name',
  'ssl_client_s_dn',
  'ssl_client_i_dn',
  'ssl_client_verify',
  'ssl_session_reused',
  'ssl_session_id',
  'ssl_ciphers',
  'ssl_curves',
  'ssl_alpn_protocol',
  'ssl_early_data',
  'ssl_client_cert',
  'ssl_client_raw_cert',
  'ssl_client_escaped_cert',
  'ssl_client_serial',
  'ssl_client_fingerprint',
  'ssl_client_v_start',
  'ssl_client_v_end',
  'ssl_client_v_remain',
  'ssl_client_s_dn_legacy',
  'ssl_client_i_dn_legacy',
  'http2',
]);

/** Families of names: `$arg_page`, `$http_user_agent`, `$cookie_session`. */
export const BUILTIN_VARIABLE_PREFIXES: readonly string[] = ['arg_', 'http_', 'cookie_'];

/**
 * True when `name` (without `$`) is a built-in variable or a regex capture (`1`…`9`). A family's
 * prefix alone is one too (`$arg_`: nginx matches prefixes by their length), never found.
 */
export function isBuiltinVariable(name: string): boolean {
  if (BUILTIN_VARIABLES.has(name) || /^[1-9]$/.test(name) || isLateVariable(name)) return true;
  return BUILTIN_VARIABLE_PREFIXES.some((prefix) => name.startsWith(prefix));
}
