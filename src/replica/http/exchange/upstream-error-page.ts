/**
 * A proxied request finalized by its upstream with a status its location has an `error_page` for —
 * the 502 or 504 of no server answering (ngx_http_upstream_next), or an answer of 300 or more under
 * `proxy_intercept_errors on` (ngx_http_upstream_intercept_errors) — goes to the page instead of
 * getting nginx's own page or the upstream's answer: the request to the server is ended (its
 * connection closed, as nginx's upstream finalization closes one whose answer was not read), and the
 * page's decision runs in the same exchange, holding what the request held (its limit_conn slots).
 */

import type { Decision, ProxyTarget } from '../contract/decision.ts';

/** What the page needs of the exchange. */
export interface PagedExchange<D extends Decision> {
  /** The exchange no longer forwards: the failure its abandoned request reports is not answered. */
  answered(): void;
  run(decision: D): void;
}

/**
 * The page for `status`, run instead; false when none is in force (the exchange answers as it would).
 * `answer`: the head of the upstream's answer with that status, paged only under
 * `proxy_intercept_errors on`; a 401's `WWW-Authenticate` goes out with the page, as nginx keeps it.
 */
export function pageInstead<D extends Decision>(
  exchange: PagedExchange<D>,
  decision: D | null,
  status: number,
  upstream: { abandonUpstream(): void } | null,
  answer?: readonly (Buffer | string)[],
): boolean {
  const target = decision as ProxyTarget | null;
  if (answer !== undefined && (status < 300 || target?.proxyRules?.interceptErrors !== true)) return false;
  let page = target?.errorPage?.(status) ?? null;
  if (page === null) return false;
  exchange.answered();
  upstream?.abandonUpstream();
  const challenge = status === 401 && answer !== undefined ? headerValue(answer, 'www-authenticate') : null;
  if (challenge !== null) page = withChallenge(page, challenge);
  const slots = target!.slots;
  if (slots != null && page.action === 'wait') slots.release(status);
  exchange.run((slots == null || page.action === 'wait' ? page : { ...page, slots }) as D);
  return true;
}

/** The first line's value of header `name` (lower case) in a raw header list, or null. */
function headerValue(rawHeaders: readonly (Buffer | string)[], name: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.toString('latin1').toLowerCase() === name)
      return rawHeaders[i + 1]!.toString('latin1');
  return null;
}

/** The page's answer with the upstream's `WWW-Authenticate` (r->headers_out.www_authenticate). */
function withChallenge(page: Decision, value: string): Decision {
  switch (page.action) {
    case 'return':
      return { ...page, headers: { ...page.headers, 'WWW-Authenticate': value } };
    case 'file':
      return { ...page, headers: [...page.headers, 'WWW-Authenticate', value] };
    case 'pass':
    case 'proxy':
      return { ...page, responseHeaders: [...(page.responseHeaders ?? []), 'WWW-Authenticate', value] };
    default:
      return page;
  }
}
