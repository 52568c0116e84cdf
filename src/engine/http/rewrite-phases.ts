/**
 * nginx's phases up to the location's configuration being final: SERVER_REWRITE (the server's script),
 * FIND_CONFIG (the location for the URI, `client_max_body_size`), REWRITE (the location's script,
 * skipped for the server's null location), POST_REWRITE (a changed URI goes back to FIND_CONFIG, at
 * most NGX_HTTP_MAX_URI_CHANGES times: then "rewrite or internal redirection cycle" and 500).
 */

import type { NginxRegex } from '../nginx-regex.ts';
import type { RequestContext } from '../variables/request-context.ts';
import { findLocationMatch } from './find-location.ts';
import type { LocationHandler } from './location-handler.ts';
import { runScript } from './rewrite-run.ts';
import type { ScriptAnswer, ScriptState } from './rewrite-script.ts';
import type { Route } from './route.ts';
import { escapeUri } from './uri.ts';

/** NGX_HTTP_MAX_URI_CHANGES + 1: what a request starts with (uri_changes). */
export const URI_CHANGES = 11;

/** Where the rewrite phases ended. */
export type RewriteEnd =
  | { readonly kind: 'answer'; readonly answer: ScriptAnswer }
  | { readonly kind: 'tooLarge'; readonly length: number }
  | { readonly kind: 'content' }
  /** The URI changes are used up: nginx's 500, which no error page answers. */
  | { readonly kind: 'cycle' };

/**
 * Runs the phases from SERVER_REWRITE (or, for a named location, from its REWRITE) to POST_REWRITE.
 * `state.handler` ends as the configuration the request is under; `uriChanges` is what is left of the
 * request's (internal redirects count too).
 */
export function rewritePhases(
  route: Route,
  ctx: RequestContext,
  state: ScriptState<LocationHandler>,
  uriChanges: number,
): RewriteEnd {
  const server = route.server;
  const serverScript = server.handler.script;
  if (serverScript.codes.length !== 0 && route.named !== true) {
    state.handler = server.handler;
    const answer = runScript(serverScript.codes, ctx, state, serverScript.log);
    if (answer !== null) return { kind: 'answer', answer };
  }
  let changes = uriChanges;
  let found = !state.rewritten;
  for (;;) {
    // FIND_CONFIG: the router's location for the URI as received, else a new search
    let handler: LocationHandler;
    let regex: NginxRegex | null;
    let autoRedirect: boolean | undefined;
    if (found) {
      handler = route.handler;
      regex = route.locationRegex;
      autoRedirect = route.autoRedirect;
    } else {
      const match = findLocationMatch(server.locations, ctx.uri);
      handler = match.location?.handler ?? server.handler;
      regex = match.regex;
      autoRedirect = match.autoRedirect;
    }
    found = false;
    // ngx_http_update_location_config: a method limit_except does not list is under its block
    const except = handler.limitExcept;
    if (except !== null && !except.methods.has(ctx.facts.method)) handler = except.handler;
    if (regex !== null) ctx.lastMatch = { regex, subject: ctx.uri };
    state.handler = handler;
    state.locationRegex = regex;
    state.uriChanged = false;
    // ngx_http_core_find_config_phase: an internal location for a request that is not
    if (handler.internal && !state.rewritten && route.rewritten === undefined && route.named !== true)
      return { kind: 'answer', answer: { code: 404, text: null } };
    const length = ctx.facts.contentLength;
    if (length !== undefined && handler.clientMaxBodyBytes !== 0 && length > handler.clientMaxBodyBytes)
      return { kind: 'tooLarge', length };
    if (autoRedirect === true) {
      const name = escapeUri(`${ctx.uri}/`);
      return {
        kind: 'answer',
        answer: { code: 301, text: ctx.args.length === 0 ? name : `${name}?${ctx.args}` },
      };
    }
    const script = handler.script;
    if (handler !== server.handler && script.codes.length !== 0) {
      const answer = runScript(script.codes, ctx, state, script.log);
      if (answer !== null) return { kind: 'answer', answer };
    }
    if (!state.uriChanged) return { kind: 'content' };
    changes--;
    if (changes === 0) {
      const message = `rewrite or internal redirection cycle while processing "${ctx.uri}"`;
      state.logs.push({ level: 'error', message });
      return { kind: 'cycle' };
    }
  }
}
