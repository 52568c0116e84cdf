/**
 * What ngx_http_ssl_module's variables compute from a certificate's facts at request time: the days
 * of validity left (`$ssl_client_v_remain`, on the request's clock) and the URL-escaped PEM
 * (`$ssl_client_escaped_cert`).
 */

const DAY_MS = 86_400_000;

/**
 * ngx_ssl_get_client_v_remain: whole days until `endMs`, `0` once less than one is left, `""`
 * without a certificate. nginx counts in its seconds clock (ngx_time()).
 */
export function daysRemaining(endMs: number, nowMs: number): string {
  if (Number.isNaN(endMs)) return '';
  const now = Math.floor(nowMs / 1000) * 1000;
  if (endMs < now + DAY_MS) return '0';
  return String(Math.trunc((endMs - now) / DAY_MS));
}

/** ngx_escape_uri's NGX_ESCAPE_URI_COMPONENT table (nginx 1.22): a set bit escapes the byte. */
const URI_COMPONENT = new Uint32Array([
  0xffffffff, 0xfc009fff, 0x78000001, 0xb8000001, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
]);

const HEX = '0123456789ABCDEF';

/** ngx_escape_uri(…, NGX_ESCAPE_URI_COMPONENT) over a byte string: `%XX`, upper-case. */
export function escapeUriComponent(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i) & 0xff;
    if (URI_COMPONENT[c >>> 5]! & (1 << (c & 0x1f))) out += `%${HEX[c >>> 4]}${HEX[c & 0xf]}`;
    else out += text[i];
  }
  return out;
}
