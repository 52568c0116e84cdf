/**
 * `error_page` as the engine holds it (ngx_http_special_response_handler's table): the page for a
 * status the request is finalized with, and where it sends the request — a URI (an internal redirect,
 * arguments after `?`), a named location (`@name`), or anywhere else (a redirect).
 */

import { newRequestContext, type RequestFacts } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';

export interface CompiledErrorPage {
  /** `=response`: the status answered (0: the redirected request's own; -1: the error's). */
  readonly overwrite: number;
  readonly uri: VariableGetter;
}

/** A level's `error_page` lines and `recursive_error_pages`. */
export interface ErrorPages {
  readonly byCode: ReadonlyMap<number, CompiledErrorPage>;
  readonly recursive: boolean;
}

export const NO_ERROR_PAGES: ErrorPages = Object.freeze({ byCode: new Map(), recursive: false });

/** Where an error page sends the request. */
export type ErrorPageTarget =
  | { readonly kind: 'uri'; readonly uri: string; readonly args: string | null }
  | { readonly kind: 'named'; readonly name: string }
  | { readonly kind: 'redirect'; readonly location: string; readonly code: number };

const REDIRECT_CODES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** ngx_http_send_error_page: the page's value evaluated for the request, and what it means. */
export function errorPageTarget(
  page: CompiledErrorPage,
  /** The request's route (its URI, host and server name). */
  route: {
    readonly target: { readonly uri: string; readonly args: string; readonly hasArgs: boolean };
    readonly host: string;
    readonly serverName: string;
  },
  facts: RequestFacts,
  nowMs: number,
  slots: number,
): ErrorPageTarget {
  const ctx = newRequestContext(facts, route.target, route.host, route.serverName, nowMs, slots);
  const value = page.uri(ctx);
  if (value.startsWith('/')) {
    const q = value.indexOf('?');
    return q === -1
      ? { kind: 'uri', uri: value, args: null }
      : { kind: 'uri', uri: value.slice(0, q), args: value.slice(q + 1) };
  }
  if (value.startsWith('@')) return { kind: 'named', name: value };
  const code = REDIRECT_CODES.has(page.overwrite) ? page.overwrite : 302;
  return { kind: 'redirect', location: value, code };
}
