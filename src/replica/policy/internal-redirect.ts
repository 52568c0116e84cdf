/**
 * A request that goes on elsewhere in its server: ngx_http_internal_redirect (an index found, an
 * error page's URI) routes it again under a new URI and runs its phases from SERVER_REWRITE;
 * ngx_http_named_location (an error page's `@name`) runs them from the named location's REWRITE.
 * Either counts against the request's URI changes (NGX_HTTP_MAX_URI_CHANGES).
 */

import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import { escapeUri } from '../../engine/http/uri.ts';
import type { Verdict } from '../../engine/http/verdict.ts';
import type { LogLine } from '../../engine/log-line.ts';
import { ACCESS_FORBIDDEN } from '../../engine/net/access-list.ts';
import type { Decision, DownstreamRequest } from '../http/contract/decision.ts';
import { type ErrorLog, requestLogContext } from '../logs/error-log.ts';
import type { Admissions } from './admissions.ts';
import { finalizedStatus, markSpecial, withErrorPage } from './error-pages.ts';
import { ExchangeFacts } from './exchange-facts.ts';
import type { ProxyTargets } from './proxy-targets.ts';
import { realIpStep } from './realip-phases.ts';
import { staticDecision } from './static-decision.ts';

/** What turning a verdict into a decision needs (again, for the phases after a delay). */
export interface Deciding {
  readonly site: Site;
  readonly route: Route;
  readonly targets: ProxyTargets;
  readonly ctx: DownstreamRequest;
  readonly errorLog: ErrorLog;
  readonly nowMs: () => number;
  readonly admissions: Admissions;
  /** The `listen` port of the listener. */
  readonly port: number;
  /** Internal redirects so far (an index found, an error page). */
  readonly redirects?: number;
  /** r->error_page: an error page was used and `recursive_error_pages` is off. */
  readonly errorPage?: boolean;
  /** The method the request goes on with (an error page's GET); absent: the request's. */
  readonly method?: string;
  /** limit_req or limit_conn ran for the request: after an internal redirect they do not again. */
  readonly limited?: boolean;
  /** The request's variables so far: an internal redirect keeps them (r->variables). */
  readonly cache?: (string | undefined)[];
}

/** The decision a verdict makes (engine-hook.ts's, with its error pages). */
export type Answer<D extends Decision> = (verdict: Verdict, deciding: Deciding) => D;

/** NGX_HTTP_MAX_URI_CHANGES: internal redirects one request may make. */
const MAX_URI_CHANGES = 10;

/**
 * ngx_http_internal_redirect: the request routed again under `uri` (with `args`; absent: the
 * request's own, as the index module passes them), its phases run there.
 */
export function internalRedirect<D extends Decision>(
  uri: string,
  deciding: Deciding,
  answer: Answer<D>,
  args?: string | null,
): D | Decision {
  const { ctx, route } = deciding;
  const redirects = (deciding.redirects ?? 0) + 1;
  if (redirects > MAX_URI_CHANGES)
    return failed(`rewrite or internal redirection cycle while internally redirecting to "${uri}"`, deciding);
  const query = args === undefined ? (route.target.hasArgs ? route.target.args : null) : args;
  const target = query === null ? escapeUri(uri) : `${escapeUri(uri)}?${query}`;
  const routed = deciding.site.route(target, ctx.host, ctx.connection.serverAddr, deciding.port);
  if (routed === null) return { action: 'return', code: 400 };
  // r->internal: a proxied request goes with its new URI, not the target it came with
  const next: Route = { ...routed, rewritten: { validLocation: true } };
  const again: Deciding = { ...deciding, route: next, redirects };
  const handler = next.handler;
  const facts = new ExchangeFacts(ctx, deciding.port, deciding.method);
  // limit_req and limit_conn count a request once (their status is the main request's): a location
  // that answers from disk answers at once, after its access rules
  if (
    handler.proxyPass === null &&
    handler.script.codes.length === 0 &&
    handler.limitExcept === null &&
    next.server.handler.script.codes.length === 0 &&
    handler.api === null
  ) {
    // realip's PREACCESS step, which decide() leaves to the engine
    realIpStep(ctx, handler.realIp);
    if (!handler.access.allows(ctx.remoteAddr)) {
      deciding.errorLog.request(ACCESS_FORBIDDEN, requestLogContext(ctx, next.serverName));
      return errorPaged(403, { action: 'return', code: 403 }, again, answer);
    }
    const variables = deciding.site.requestContext(next, facts, deciding.nowMs(), deciding.cache);
    const kept: Deciding = { ...again, cache: variables.cache };
    const redirect = (then: string) => internalRedirect(then, kept, answer);
    const answerHeaders = deciding.site.answerHeaders(next, facts, deciding.nowMs(), variables.cache);
    const decision = staticDecision({ ...kept, answerHeaders, variables, method: facts.method }, redirect);
    return decision.action === 'return' ? errorPaged(decision.code, decision, again, answer) : decision;
  }
  return decideAgain(again, facts, answer);
}

/** ngx_http_named_location: the request's phases from the named location's REWRITE, its URI kept. */
export function namedLocation<D extends Decision>(
  name: string,
  deciding: Deciding,
  answer: Answer<D>,
): D | Decision {
  const handler = deciding.route.server.named.get(name);
  if (handler === undefined) return failed(`could not find named location "${name}"`, deciding);
  const redirects = (deciding.redirects ?? 0) + 1;
  if (redirects > MAX_URI_CHANGES)
    return failed(
      `rewrite or internal redirection cycle while redirect to named location "${name}"`,
      deciding,
    );
  const next: Route = { ...deciding.route, handler, locationRegex: null, named: true };
  const facts = new ExchangeFacts(deciding.ctx, deciding.port, deciding.method);
  return decideAgain({ ...deciding, route: next, redirects }, facts, answer);
}

/** The request's phases run again on `again.route`, with the URI changes it has left. */
function decideAgain<D extends Decision>(
  again: Deciding,
  facts: ExchangeFacts,
  answer: Answer<D>,
): D | Decision {
  const uriChanges = MAX_URI_CHANGES + 1 - (again.redirects ?? 0);
  const verdict = again.site.decide(
    again.route,
    facts,
    again.nowMs(),
    uriChanges,
    again.limited,
    again.cache,
  );
  return answer(verdict, again);
}

/** `decision`, a request finalized with `status`, as the error page the configuration has for it makes it. */
export function errorPaged<D extends Decision>(
  status: number,
  decision: D | Decision,
  deciding: Deciding,
  answer: Answer<D>,
): D | Decision {
  const paged = withErrorPage(status, decision, deciding, {
    redirect: (uri, args, errorPage, method) =>
      internalRedirect(uri, { ...deciding, errorPage, method }, answer, args),
    named: (name, errorPage, method) => namedLocation(name, { ...deciding, errorPage, method }, answer),
  });
  // an answer the special response handler sent as it was: an error page's status stays off it
  return paged === decision ? markSpecial({ ...decision }) : paged;
}

/** nginx's 500 with its error-log line. */
function failed(message: string, deciding: Deciding): Decision {
  const line: LogLine = { level: 'error', message };
  deciding.errorLog.request(line, requestLogContext(deciding.ctx, deciding.route.serverName));
  return markSpecial({ action: 'return', code: 500 });
}

export { finalizedStatus };
