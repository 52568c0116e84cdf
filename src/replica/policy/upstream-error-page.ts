/**
 * `error_page` for what the upstream finalizes a proxied request with (ngx_http_upstream_finalize_request
 * → ngx_http_finalize_request → ngx_http_special_response_handler): a 502 or 504 when no server
 * answered (ngx_http_upstream_next), or the status of an answer `proxy_intercept_errors` intercepts
 * (ngx_http_upstream_intercept_errors). The page is found as for any other status (error-pages.ts).
 */

import type { Decision } from '../http/contract/decision.ts';
import { type Answer, type Deciding, errorPaged } from './internal-redirect.ts';

/**
 * What the forwarding decision carries for its location's `error_page` lines: the decision the page
 * for a status makes, or null when none is in force; undefined when the location has none at all.
 */
export function upstreamErrorPage<D extends Decision>(
  deciding: Deciding,
  answer: Answer<D>,
): ((status: number) => Decision | null) | undefined {
  const pages = deciding.route.handler.errorPages;
  if (pages.byCode.size === 0 || deciding.errorPage === true) return undefined;
  return (status) => {
    if (!pages.byCode.has(status)) return null;
    // limit_req and limit_conn ran for the request already (they run once a request)
    return errorPaged(status, { action: 'return', code: status }, { ...deciding, limited: true }, answer);
  };
}
