/**
 * The head of an answer the replica makes itself (a page, a `return`), as nginx's header filter
 * (ngx_http_header_filter_module) writes it: its own spelling of the fields (`Server`,
 * `Content-Type`, `Content-Length`, `Location`), `Server` on every answer (`server_tokens`), and no
 * `Content-Type` or `Content-Length` on a 204.
 */
import { uriFieldValue } from './field-value.ts';
import { serverValue } from './server-tokens.ts';
import { errorPage } from './status-pages.ts';

export { serverValue };

/** The redirects whose `return` text is the `Location` (ngx_http_send_response). */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

/** A head and body of the replica's own. */
export interface OwnAnswer {
  readonly headers: string[];
  readonly body: Buffer | string | null;
}

/**
 * nginx's page for `code` (a refusal, an error, `return code;`): `text/html` with the page, or an
 * empty body; below 400 (not a redirect), `return code;`'s empty `text/plain`.
 */
export function pageAnswer(
  code: number,
  serverTokens: boolean,
  retryAfterS?: number,
  extraHeaders?: readonly string[],
): OwnAnswer {
  if (code < 400 && !REDIRECTS.has(code)) return returnAnswer(code, '', NO_FIELDS, serverTokens);
  const page = errorPage(code, serverTokens);
  const headers = ['Server', serverValue(serverTokens)];
  if (page !== null) headers.push('Content-Type', 'text/html');
  headers.push('Content-Length', `${page === null ? 0 : page.length}`);
  if (retryAfterS !== undefined) headers.push('Retry-After', `${retryAfterS}`);
  if (extraHeaders !== undefined) headers.push(...extraHeaders);
  return { headers, body: page };
}

/**
 * nginx `return code [text]`/`return code URL`: below 400 the text, even none, is the body as
 * `text/plain` (ngx_http_script_return_code sends it); a redirect's URL is the `Location`, with
 * nginx's page; from 400 without text, nginx's page. A 204 carries neither type nor length
 * (the header filter clears both).
 */
export function returnAnswer(
  code: number,
  text: string | undefined,
  given: Readonly<Record<string, string>>,
  serverTokens: boolean,
): OwnAnswer {
  const headers = ['Server', serverValue(serverTokens)];
  const rest: string[] = [];
  let type: string | null = null;
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (lower === 'content-type') type = uriFieldValue(value);
    // a `return` URL is made from request data (`$uri` is decoded): kept to one field value
    else rest.push(lower === 'location' ? 'Location' : name, uriFieldValue(value));
  }
  let body: Buffer | string | null = text ?? null;
  if (body === null && code < 400 && !REDIRECTS.has(code)) body = '';
  if (body === null) {
    body = errorPage(code, serverTokens);
    if (body !== null) type ??= 'text/html';
  } else type ??= 'text/plain';
  if (code !== 204) {
    if (type !== null) headers.push('Content-Type', type);
    headers.push('Content-Length', `${body === null ? 0 : Buffer.byteLength(body)}`);
  }
  headers.push(...rest);
  return { headers, body: code === 204 ? null : body };
}
