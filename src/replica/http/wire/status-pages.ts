/**
 * nginx's status lines and error pages (ngx_http_header_filter_module's reason phrases,
 * ngx_http_special_response's bodies), with the tail naming limitswitch instead of nginx — with its
 * version unless `server_tokens off`, as nginx's. Checked against nginx 1.22 answering `return N;`
 * for every N in 400..599.
 */
import { serverValue } from './server-tokens.ts';

/** Reason phrases nginx prints in the status line; other codes get an empty one (`HTTP/1.1 420 `). */
const REASONS: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  206: 'Partial Content',
  301: 'Moved Permanently',
  302: 'Moved Temporarily',
  303: 'See Other',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Time-out',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Request Entity Too Large',
  414: 'Request-URI Too Large',
  415: 'Unsupported Media Type',
  416: 'Requested Range Not Satisfiable',
  421: 'Misdirected Request',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Temporarily Unavailable',
  504: 'Gateway Time-out',
  505: 'HTTP Version Not Supported',
  507: 'Insufficient Storage',
};

/** Page titles where they differ from the status line (`401 Authorization Required`, `302 Found`). */
const TITLES: Readonly<Record<number, string>> = {
  302: '302 Found',
  401: '401 Authorization Required',
  494: '400 Request Header Or Cookie Too Large',
  495: '400 The SSL certificate error',
  496: '400 No required SSL certificate was sent',
  497: '400 The plain HTTP request was sent to HTTPS port',
  498: '404 Not Found',
};

/** Codes with a built-in page (nginx's ngx_http_error_pages). */
const PAGE_CODES = [
  301, 302, 303, 307, 308, 400, 401, 402, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414, 415, 416,
  421, 429, 494, 495, 496, 497, 498, 500, 501, 502, 503, 504, 505, 507,
];

/** nginx codes that end the connection without any response (ngx_http_terminate_request). */
const CLOSING_CODES: ReadonlySet<number> = new Set([408, 444, 499]);

/** Pages after which nginx closes the connection (ngx_http_special_response_handler drops keep-alive). */
const CLOSING_PAGES: ReadonlySet<number> = new Set([400, 413, 414, 495, 496, 497, 500, 501]);

/** True when nginx's page for `code` ends the connection (`Connection: close`). */
export function pageClosesConnection(code: number): boolean {
  return CLOSING_PAGES.has(code);
}

/** The status nginx puts on the wire: the SSL/header-size pseudo codes go out as 400. */
export function wireStatus(code: number): number {
  return code >= 494 && code <= 497 ? 400 : code;
}

/** The reason phrase of the status line nginx sends for `code` (may be empty). */
export function statusReason(code: number): string {
  return REASONS[wireStatus(code)] ?? '';
}

/** True when nginx answers `code` by closing the connection (444, 408, 499). */
export function closesConnection(code: number): boolean {
  return CLOSING_CODES.has(code);
}

function renderPage(code: number, tail: string): Buffer {
  const title = TITLES[code] ?? `${code} ${REASONS[code]}`;
  const h1 = code >= 494 && code <= 497 ? '400 Bad Request' : title;
  const detail = code >= 494 && code <= 497 ? `<center>${title.slice(4)}</center>\r\n` : '';
  return Buffer.from(
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${h1}</h1></center>\r\n` +
      `${detail}<hr><center>${tail}</center>\r\n</body>\r\n</html>\r\n`,
    'latin1',
  );
}

/** The pages with the full tail (`server_tokens on`) and the short one (`off`). */
const FULL_PAGES = new Map<number, Buffer>(
  PAGE_CODES.map((code) => [code, renderPage(code, serverValue(true))]),
);
const SHORT_PAGES = new Map<number, Buffer>(
  PAGE_CODES.map((code) => [code, renderPage(code, serverValue(false))]),
);

/**
 * The HTML page nginx sends for `code` (its tail by `server_tokens`), or null when nginx sends an
 * empty body. Shared buffer: do not mutate.
 */
export function errorPage(code: number, serverTokens: boolean): Buffer | null {
  return (serverTokens ? FULL_PAGES : SHORT_PAGES).get(code) ?? null;
}
