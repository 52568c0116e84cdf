/**
 * ngx_http_rewrite_module's compiled script: the codes of one level (a server, a location), run in
 * the order written. An `if` holds the codes of its block inline, as nginx compiles them into its
 * level's array, with the block's own location configuration the request is put under when the
 * condition holds. The configuration's type `H` is a parameter: the location handler holds its script.
 */

import type { LogLine } from '../log-line.ts';
import type { NginxRegex } from '../nginx-regex.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';

/** `return code [text]`: the text is evaluated per request (a body, or a redirect's URL). */
export interface CompiledReturn {
  readonly code: number;
  readonly text: VariableGetter | null;
}

/** A piece of a `rewrite` replacement: text, a capture (`$1`), or a variable. */
export type ReplacementPart = string | { readonly capture: number } | VariableGetter;

/** `rewrite regex replacement [flag]`. */
export interface RewriteRegexCode {
  readonly op: 'rewrite';
  /** The regex as written, for rewrite_log's lines. */
  readonly name: string;
  readonly regex: NginxRegex;
  /** The slots of its named captures, set when it matches (nginx makes each one a variable). */
  readonly namedSlots: ReadonlyMap<string, number>;
  /** The replacement's URI part (before an unescaped `?`; all of it for a redirect). */
  readonly uri: readonly ReplacementPart[];
  /** The replacement's arguments (after `?`); null: it has no `?`. */
  readonly args: readonly ReplacementPart[] | null;
  /** The original arguments are appended (no trailing `?` in the replacement). */
  readonly addArgs: boolean;
  /** The replacement's text has a `?`: a redirect appends the original arguments with `&` (code->args). */
  readonly question: boolean;
  /** 301 or 302 for a redirect (`permanent`, `redirect`, an `http://`, `https://`, `$scheme` replacement); 0: none. */
  readonly redirect: 0 | 301 | 302;
  /** `break`: the location stays, the script ends. */
  readonly breakCycle: boolean;
  /** `last`, `break` or a redirect: the script ends after it. */
  readonly last: boolean;
}

/** `set $variable value`. */
export interface SetCode {
  readonly op: 'set';
  readonly slot: number;
  readonly value: VariableGetter;
}

/** `set $limit_rate value` (ngx_http_variable_set_limit_rate): the answer's rate, a size. */
export interface SetLimitRateCode {
  readonly op: 'set_limit_rate';
  readonly value: VariableGetter;
}

/** `break`. */
export interface BreakCode {
  readonly op: 'break';
}

/** `return code [text]`. */
export interface ReturnCode {
  readonly op: 'return';
  readonly answer: CompiledReturn;
}

/** `if (condition) { … }`. */
export interface IfCode<H> {
  readonly op: 'if';
  readonly holds: (ctx: RequestContext) => boolean;
  readonly codes: readonly RewriteCode<H>[];
  /** The block's location configuration (null: a server-level `if`, whose configuration FIND_CONFIG replaces). */
  readonly handler: H | null;
}

export type RewriteCode<H> =
  | RewriteRegexCode
  | SetCode
  | SetLimitRateCode
  | BreakCode
  | ReturnCode
  | IfCode<H>;

/** A level's script and its `rewrite_log`. */
export interface RewriteScript<H> {
  readonly codes: readonly RewriteCode<H>[];
  /** `rewrite_log on`: a notice for each regex tried and each URI rewritten. */
  readonly log: boolean;
}

/** What running a script changed of the request, read by the phases after it. */
export interface ScriptState<H> {
  /** r->uri_changed: a `rewrite` changed the URI and no `break` followed (POST_REWRITE finds the location again). */
  uriChanged: boolean;
  /** r->valid_location: cleared by a `break` after a changed URI (proxy_pass then sends the whole URI). */
  validLocation: boolean;
  /** r->internal: a `rewrite` changed the URI (the target as received is no longer the request's). */
  rewritten: boolean;
  /** The location configuration the request is under (an `if`'s, once its condition held). */
  handler: H;
  /** The regex location's regex that FIND_CONFIG matched last (null: none). */
  locationRegex: NginxRegex | null;
  /** rewrite_log's notices and the script's errors, in order. */
  logs: LogLine[];
}

/** How a script ended when it answers: `return`, a redirect, or nginx's 500. */
export interface ScriptAnswer {
  readonly code: number;
  /** The body, or a redirect's URL; null: none (an error page). */
  readonly text: string | null;
}

/** The empty script of a level with no rewrite directive. */
export const NO_SCRIPT: RewriteScript<never> = Object.freeze({ codes: Object.freeze([]), log: false });
