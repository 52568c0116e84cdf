/**
 * What nginx 1.22 refuses of an HTTP/2 request's fields before any phase (ngx_http_v2.c): its head was
 * parsed by the h2 session, so only what nginx's header handlers check is read again.
 */
import {
  type HeadFault,
  isHostHeader,
  type RequestHead,
  validateHost,
  WHILE_HEADERS,
} from './request-head.ts';

/**
 * The fault, or null: `:authority` is read as a Host line (ngx_http_v2_parse_authority: the Host
 * handler), so it is validated as one, and a Host field beside it is a second Host line. Its fields
 * come as the h2 session decoded them, the `:authority` first as `host` (inbound/h2-request.ts).
 */
export function readH2RequestHead(head: RequestHead): HeadFault | null {
  const raw = head.rawHeaders;
  const requestLine = `${head.method ?? 'GET'} ${head.url ?? '/'} HTTP/2.0`;
  let host: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (!isHostHeader(raw[i]!)) continue;
    const value = raw[i + 1]!;
    const fault = (message: string): HeadFault => ({
      code: 400,
      message: `${message} ${WHILE_HEADERS}`,
      requestLine,
      host: host ?? value,
      hostSelected: false,
    });
    if (host !== null)
      return fault(`client sent duplicate host header: "host: ${value}", previous value: "host: ${host}"`);
    host = value;
    if (!validateHost(value)) return fault('client sent invalid host header');
  }
  return null;
}
