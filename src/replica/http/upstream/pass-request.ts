/**
 * `proxy_pass_request_headers off`: none of the client's header lines go to the server, only the
 * body's length (nginx's own `Content-Length: $proxy_internal_body_length`); `proxy_pass_request_body
 * off`: no body, and no length for it.
 */
import type { ProxyRules } from '../../../engine/http/proxy-rules.ts';

/** The client's header lines to forward, `[name, value, …]`, by the location's rules. */
export function passedHeaders(rawHeaders: readonly string[], rules: ProxyRules): readonly string[] {
  if (rules.passRequestHeaders && rules.passRequestBody) return rawHeaders;
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const length = rawHeaders[i]!.toLowerCase() === 'content-length';
    if (length ? rules.passRequestBody : rules.passRequestHeaders)
      out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}
