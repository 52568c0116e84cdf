/**
 * Directives nginx knows but limitswitch does not implement. They are rejected with a clear message
 * rather than `unknown directive`, and rather than being ignored: each would change which requests
 * reach an upstream or how they are limited.
 */

export const UNSUPPORTED_DIRECTIVES: ReadonlySet<string> = new Set([
  // reading from the upstream server at a rate (the client's answer has limit_rate)
  'proxy_limit_rate',
  // TLS settings the replica does not honour (the rest: directives/ssl.ts)
  'ssl',
  'ssl_buffer_size',
  'ssl_certificate_cache',
  'ssl_conf_command',
  'ssl_crl',
  'ssl_key_log',
  'ssl_ocsp',
  'ssl_ocsp_cache',
  'ssl_ocsp_responder',
  'ssl_password_file',
  'ssl_reject_handshake',
  'ssl_session_ticket_key',
  'ssl_stapling_file',
  'ssl_stapling_responder',
  'ssl_stapling_verify',
  'http2_push',
  'http2_push_preload',
  // request routing and internal redirects
  'try_files',
  'mirror',
  'split_clients',
  // authentication and access
  'auth_basic',
  'auth_basic_user_file',
  'auth_request',
  'auth_request_set',
  'auth_jwt',
  'satisfy',
  'valid_referers',
  'secure_link',
  'secure_link_md5',
  'geoip_country',
  'geoip_city',
  // other content handlers
  'fastcgi_pass',
  'uwsgi_pass',
  'scgi_pass',
  'grpc_pass',
  'memcached_pass',
  'stub_status',
  'empty_gif',
  'js_import',
  'js_include',
  'js_set',
  'js_content',
  'perl',
  'perl_set',
  // caching and body rewriting
  'proxy_cache',
  'proxy_cache_path',
  'proxy_cache_key',
  'proxy_cache_valid',
  'proxy_store',
  'proxy_method',
  'proxy_set_body',
  'sub_filter',
  'ssi',
  'slice',
  // balancing methods and Plus cluster features
  'least_conn',
  'least_time',
  'ip_hash',
  'hash',
  'random',
  'ntlm',
  'sticky',
  'health_check',
  'match',
  'zone_sync',
  // other top-level modules
  'stream',
  'mail',
]);
