/**
 * One `rewrite`, run on the request's URI (ngx_http_script_regex_start_code and its end code): the
 * regex's captures become the request's; the replacement is built from text, captures and variables;
 * then either the redirect's `Location` (its escapes undone where nginx undoes them) or the new URI
 * and arguments.
 */

import type { RegexCaptures } from '../nginx-regex.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { ReplacementPart, RewriteRegexCode, ScriptAnswer, ScriptState } from './rewrite-script.ts';

/** The code's verdict: no match, a new URI (the script goes on or ends), or an answer. */
export type RewriteResult = 'next' | 'exit' | ScriptAnswer;

export function runRewrite(
  code: RewriteRegexCode,
  ctx: RequestContext,
  state: ScriptState<unknown>,
  log: boolean,
): RewriteResult {
  const subject = ctx.uri;
  const captures = code.regex.exec(subject);
  if (captures === null) {
    if (log) notice(state, `"${code.name}" does not match "${subject}"`);
    ctx.lastMatch = null;
    return 'next';
  }
  if (log) notice(state, `"${code.name}" matches "${subject}"`);
  ctx.lastMatch = { regex: code.regex, subject, captures };
  for (const [name, slot] of code.namedSlots) ctx.cache[slot] = captures.groups?.[name] ?? '';
  // r->quoted_uri || r->plus_in_uri: the target's path had an escape or a plus
  const quoted = quotedPath(ctx.facts.target);
  if (code.redirect !== 0) {
    let url = unescapeRedirect(build(code.uri, ctx, captures, quoted));
    if (code.addArgs && ctx.args.length !== 0) url += `${code.question ? '&' : '?'}${ctx.args}`;
    if (log) notice(state, `rewritten redirect: "${url}"`);
    return { code: code.redirect, text: url };
  }
  const uri = build(code.uri, ctx, captures, false);
  let args = ctx.args;
  let hasArgs = ctx.hasArgs;
  if (code.args !== null) {
    args = build(code.args, ctx, captures, quoted);
    if (code.addArgs && ctx.args.length !== 0) args += `&${ctx.args}`;
    hasArgs = true;
  } else if (!code.addArgs) {
    args = '';
  }
  if (log) notice(state, `rewritten data: "${uri}", args: "${args}"`);
  state.rewritten = true;
  if (code.breakCycle) {
    state.validLocation = false;
    state.uriChanged = false;
  } else {
    state.uriChanged = true;
  }
  ctx.uri = uri;
  ctx.args = args;
  ctx.hasArgs = hasArgs && args.length !== 0;
  if (uri.length === 0) {
    state.logs.push({ level: 'error', message: 'the rewritten URI has a zero length' });
    return { code: 500, text: null };
  }
  return code.last ? 'exit' : 'next';
}

function notice(state: ScriptState<unknown>, message: string): void {
  state.logs.push({ level: 'notice', message });
}

/** The replacement's parts in order; a capture escaped as an argument when `escape` (ngx_http_script_copy_capture_code). */
function build(
  parts: readonly ReplacementPart[],
  ctx: RequestContext,
  captures: RegexCaptures,
  quoted: boolean,
): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (typeof part === 'function') out += part(ctx);
    else {
      const value = part.capture < captures.length ? (captures[part.capture] ?? '') : '';
      out += quoted ? escapeArgs(value) : value;
    }
  }
  return out;
}

function quotedPath(target: string): boolean {
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  return path.includes('%') || path.includes('+');
}

/** ngx_escape_uri's NGX_ESCAPE_ARGS: " ", "#", "%", "&", "+", ";", "?", controls and bytes over 0x7e. */
export function escapeArgs(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (
      c <= 0x20 ||
      c >= 0x7f ||
      c === 0x23 ||
      c === 0x25 ||
      c === 0x26 ||
      c === 0x2b ||
      c === 0x3b ||
      c === 0x3f
    )
      out += `%${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += value[i];
  }
  return out;
}

/**
 * ngx_unescape_uri with NGX_UNESCAPE_REDIRECT: an escape of a printable byte over `%` is undone, others
 * are kept; everything from the first `?` (written, or escaped as `%3F`) on is left as it is.
 */
export function unescapeRedirect(value: string): string {
  let out = '';
  let i = 0;
  while (i < value.length) {
    const ch = value[i]!;
    if (ch === '?') return out + value.slice(i);
    if (ch !== '%') {
      out += ch;
      i++;
      continue;
    }
    const first = value[i + 1];
    if (first === undefined) return out;
    if (!/[0-9a-fA-F]/.test(first)) {
      // the invalid quoted character: nginx drops the `%`
      out += first;
      i += 2;
      continue;
    }
    const second = value[i + 2];
    if (second === undefined) return out;
    if (!/[0-9a-fA-F]/.test(second)) {
      // dropped with the `%` and the first digit
      i += 3;
      continue;
    }
    const byte = Number.parseInt(first + second, 16);
    if (byte === 0x3f) return `${out}?${value.slice(i + 3)}`;
    if (byte > 0x25 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += value.slice(i, i + 3);
    i += 3;
  }
  return out;
}
