/**
 * `error_page` on the data path (ngx_http_special_response_handler, ngx_http_send_error_page): a
 * status the request is finalized with, that the configuration in force has a page for, sends the
 * request to the page's URI (an internal redirect, a GET unless it was HEAD), named location or
 * redirect — once, unless `recursive_error_pages on`; not when the request's URI changes are used up.
 * The answer there has the error's status (or `=response`'s) unless it is itself an error.
 */

import { errorPageTarget } from '../../engine/http/error-pages.ts';
import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import type { Verdict } from '../../engine/http/verdict.ts';
import type { Decision, DownstreamRequest, ReturnDecision } from '../http/contract/decision.ts';
import { ExchangeFacts } from './exchange-facts.ts';

/** What the error page needs of the request's decision so far. */
export interface ErrorPageDeciding {
  readonly site: Site;
  readonly route: Route;
  readonly ctx: DownstreamRequest;
  readonly port: number;
  readonly nowMs: () => number;
  /** r->error_page: an error page was used and `recursive_error_pages` is off. */
  readonly errorPage?: boolean;
  /** The method the request goes on with (an error page's GET). */
  readonly method?: string;
}

/** How the request goes on: an internal redirect (with its arguments), or to a named location. */
export interface ErrorPageMoves<D> {
  readonly redirect: (uri: string, args: string | null, errorPage: boolean, method: string) => D;
  readonly named: (name: string, errorPage: boolean, method: string) => D;
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** Decisions the special response handler sent: an error page's status does not replace theirs. */
const SPECIAL = new WeakSet<object>();

export function markSpecial<D extends Decision>(decision: D): D {
  SPECIAL.add(decision);
  return decision;
}

/**
 * The status a verdict finalizes the request with (what nginx's special response handler gets), or 0
 * for an answer sent as it is: `return` with a text below 300 or over 399, a file, a proxied answer.
 */
export function finalizedStatus(verdict: Verdict, decision: Decision): number {
  switch (verdict.kind) {
    case 'return':
      if (verdict.cycle === true) return 0;
      return (verdict.code >= 400 && verdict.text === null) || REDIRECTS.has(verdict.code) ? verdict.code : 0;
    case 'reject':
    case 'refuse':
    case 'deny':
      return verdict.code;
    case 'static':
      // a page (404, 403, 405) or the directory's 301
      return decision.action === 'return' ? decision.code : 0;
    default:
      return 0;
  }
}

/** `decision` as the error page for `status` makes it, if the configuration in force has one. */
export function withErrorPage<D extends Decision>(
  status: number,
  decision: D,
  deciding: ErrorPageDeciding,
  moves: ErrorPageMoves<D>,
): D | Decision {
  if (deciding.errorPage === true) return decision;
  const pages = deciding.route.handler.errorPages;
  const page = pages.byCode.get(status);
  if (page === undefined) return decision;
  const method = deciding.method ?? deciding.ctx.req.method ?? 'GET';
  const facts = new ExchangeFacts(deciding.ctx, deciding.port, method);
  const slots = deciding.site.variables.slots;
  const target = errorPageTarget(page, deciding.route, facts, deciding.nowMs(), slots);
  const used = !pages.recursive;
  const then = method === 'HEAD' ? 'HEAD' : 'GET';
  // r->err_status: the error's, or `=response`'s (0: the page's own)
  const errStatus = page.overwrite >= 0 ? page.overwrite : status;
  switch (target.kind) {
    case 'redirect': {
      const answered = decision as Partial<ReturnDecision>;
      return markSpecial({
        action: 'return',
        code: target.code,
        headers: { location: target.location },
        answerHeaders: answered.answerHeaders,
        client: answered.client,
      } satisfies ReturnDecision);
    }
    case 'named':
      return answeredWith(moves.named(target.name, used, then), errStatus, decision);
    case 'uri':
      return answeredWith(moves.redirect(target.uri, target.args, used, then), errStatus, decision);
  }
}

/**
 * The page's answer under the error's status (send_header's r->err_status), unless it is an error
 * itself; a `return` without a text is then answered empty, and a redirect's Location stays.
 */
function answeredWith<D extends Decision>(page: D, errStatus: number, error: Decision): D | Decision {
  if (errStatus === 0 || SPECIAL.has(page)) return page;
  if (page.action === 'file') return { ...page, status: errStatus };
  if (page.action === 'pass' || page.action === 'proxy') return { ...page, errStatus };
  if (page.action !== 'return') return page;
  const location = error.action === 'return' ? error.headers?.location : undefined;
  const headers = location === undefined ? page.headers : { ...page.headers, location };
  return { ...page, code: errStatus, body: page.body ?? '', headers };
}
