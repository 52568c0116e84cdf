/**
 * Evaluators of nginx's built-in variables over a {@link RequestContext}. Values are byte strings;
 * `$binary_remote_addr` is 4 bytes for IPv4 and 16 for IPv6, as in ngx_http_variables.c.
 */
import { parseClientAddr } from '../net/address-text.ts';
import { parseIpv4 } from '../net/ip-text.ts';
import { lateGetter } from './late-variables.ts';
import type { RequestContext } from './request-context.ts';
import { daysRemaining, escapeUriComponent } from './ssl-values.ts';

export type VariableGetter = (ctx: RequestContext) => string;

const EXACT: Record<string, VariableGetter> = {
  binary_remote_addr: (ctx) => binaryAddress(ctx.facts.remoteAddr),
  remote_addr: (ctx) => ctx.facts.remoteAddr,
  remote_port: (ctx) => portText(ctx.facts.remotePort),
  realip_remote_addr: (ctx) => ctx.facts.socketAddr ?? ctx.facts.remoteAddr,
  realip_remote_port: (ctx) => portText(ctx.facts.socketPort ?? ctx.facts.remotePort),
  uri: (ctx) => ctx.uri,
  document_uri: (ctx) => ctx.uri,
  request_uri: (ctx) => ctx.facts.target,
  args: (ctx) => ctx.args,
  query_string: (ctx) => ctx.args,
  is_args: (ctx) => (ctx.hasArgs ? '?' : ''),
  host: (ctx) => ctx.host,
  hostname: (ctx) => ctx.facts.hostname ?? '',
  server_name: (ctx) => ctx.serverName,
  server_port: (ctx) => portText(ctx.facts.serverPort),
  server_addr: (ctx) => ctx.facts.serverAddr,
  request_method: (ctx) => ctx.facts.method,
  scheme: (ctx) => ctx.facts.scheme,
  https: (ctx) => (ctx.facts.scheme === 'https' ? 'on' : ''),
  request_id: (ctx) => ctx.facts.requestId ?? '',
  limit_req_status: (ctx) => ctx.limitReqStatus,
  limit_conn_status: (ctx) => ctx.limitConnStatus,
  msec: (ctx) => (ctx.nowMs / 1000).toFixed(3),
  proxy_add_x_forwarded_for: (ctx) => {
    const xff = ctx.facts.headers['x-forwarded-for'];
    return xff ? `${xff}, ${ctx.facts.remoteAddr}` : ctx.facts.remoteAddr;
  },
  request_body: (ctx) => ctx.facts.progress?.requestBody ?? '',
  request_body_file: (ctx) => ctx.facts.progress?.requestBodyFile ?? '',
  content_type: (ctx) => ctx.facts.headers['content-type'] ?? '',
  content_length: (ctx) => ctx.facts.headers['content-length'] ?? '',
  server_protocol: (ctx) => ctx.facts.protocol ?? 'HTTP/1.1',
  ssl_protocol: (ctx) => ctx.facts.tls?.protocol ?? '',
  ssl_cipher: (ctx) => ctx.facts.tls?.cipher ?? '',
  ssl_server_name: (ctx) => ctx.facts.tls?.serverName ?? '',
  ssl_client_s_dn: (ctx) => ctx.facts.tls?.clientSubjectDn ?? '',
  ssl_client_i_dn: (ctx) => ctx.facts.tls?.clientIssuerDn ?? '',
  ssl_client_verify: (ctx) => ctx.facts.tls?.clientVerify ?? '',
  ssl_session_reused: (ctx) => ctx.facts.tls?.sessionReused ?? '',
  ssl_session_id: (ctx) => ctx.facts.tls?.sessionId ?? '',
  ssl_ciphers: (ctx) => ctx.facts.tls?.ciphers ?? '',
  ssl_curves: (ctx) => ctx.facts.tls?.curves ?? '',
  ssl_alpn_protocol: (ctx) => ctx.facts.tls?.alpnProtocol ?? '',
  // no 0-RTT here (`ssl_early_data` is off only): never in early data
  ssl_early_data: () => '',
  ssl_client_raw_cert: (ctx) => ctx.facts.tls?.clientRawCert ?? '',
  // ngx_ssl_get_certificate: the PEM without its last newline, a tab after every other
  ssl_client_cert: (ctx) => (ctx.facts.tls?.clientRawCert ?? '').slice(0, -1).replaceAll('\n', '\n\t'),
  ssl_client_escaped_cert: (ctx) => escapeUriComponent(ctx.facts.tls?.clientRawCert ?? ''),
  ssl_client_serial: (ctx) => ctx.facts.tls?.clientSerial ?? '',
  ssl_client_fingerprint: (ctx) => ctx.facts.tls?.clientFingerprint ?? '',
  ssl_client_v_start: (ctx) => ctx.facts.tls?.clientVStart ?? '',
  ssl_client_v_end: (ctx) => ctx.facts.tls?.clientVEnd ?? '',
  ssl_client_v_remain: (ctx) => daysRemaining(ctx.facts.tls?.clientVEndMs ?? Number.NaN, ctx.nowMs),
  ssl_client_s_dn_legacy: (ctx) => ctx.facts.tls?.clientSubjectDnLegacy ?? '',
  ssl_client_i_dn_legacy: (ctx) => ctx.facts.tls?.clientIssuerDnLegacy ?? '',
  // ngx_http_v2_variable: h2 over TLS, h2c in the clear, empty for HTTP/1.x
  http2: (ctx) => (ctx.facts.protocol !== 'HTTP/2.0' ? '' : ctx.facts.scheme === 'https' ? 'h2' : 'h2c'),
};

/** The getter for a built-in name (`arg_*`, `http_*`, `cookie_*` included), or undefined. */
export function builtinGetter(name: string): VariableGetter | undefined {
  const exact = EXACT[name];
  if (exact !== undefined) return exact;
  const late = lateGetter(name);
  if (late !== undefined) return late;
  if (name.startsWith('arg_')) {
    const arg = name.slice(4).toLowerCase();
    return (ctx) => argument(ctx.args, arg);
  }
  if (name.startsWith('http_')) {
    const header = name.slice(5).toLowerCase().replaceAll('_', '-');
    return (ctx) => ctx.facts.headers[header] ?? '';
  }
  if (name.startsWith('cookie_')) {
    const cookie = name.slice(7);
    return (ctx) => cookieValue(ctx.facts.headers.cookie, cookie);
  }
  return undefined;
}

/** `ngx_http_arg`: the raw value of the first `name=` in `args`, names compared case-insensitively. */
export function argument(args: string, nameLower: string): string {
  if (args.length === 0) return '';
  for (const pair of args.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (name.length === nameLower.length && name.toLowerCase() === nameLower)
      return eq === -1 ? '' : pair.slice(eq + 1);
  }
  return '';
}

function cookieValue(header: string | undefined, name: string): string {
  if (header === undefined) return '';
  for (const part of header.split(';')) {
    const trimmed = part.trimStart();
    if (trimmed.startsWith(name) && trimmed[name.length] === '=') return trimmed.slice(name.length + 1);
  }
  return '';
}

/**
 * ngx_http_variable_remote_port and _server_port: a port nginx prints only when it is one (a real-ip
 * header's address may have none, a UNIX-domain socket has none).
 */
function portText(port: number): string {
  return port > 0 && port < 65536 ? String(port) : '';
}

/** The 4- or 16-byte binary form of a textual address; the text itself for anything else (unix:). */
export function binaryAddress(address: string): string {
  const v4 = parseIpv4(address);
  if (v4 >= 0) return String.fromCharCode(v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255);
  const v6 = parseClientAddr(address)?.v6;
  return v6 ? String.fromCharCode(...v6) : address;
}
