/**
 * The HTTPRoute `URLRewrite` filter's path as an nginx `rewrite … break` the selected rule runs before
 * `proxy_pass`: `ReplaceFullPath` replaces the path, `ReplacePrefixMatch` the matched prefix (a
 * `PathPrefix` match's, as the spec requires); the query is kept (a replacement without `?`). A
 * `hostname` rewrite is refused: it would change the `Host` the backend sees, which the location's
 * `proxy_set_header` does not follow per rule.
 */
import type { HTTPRouteFilter } from './gateway-objects.ts';
import { type MatchCondition, regexLiteral } from './route-match.ts';

export interface PathRewrite {
  readonly type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  readonly value: string;
}

const PLAIN_PATH = /^\/[^\s;{}$"'\\?#]*$/;

export function readUrlRewrite(f: HTTPRouteFilter, field: string): PathRewrite | { error: string } {
  const r = (f.urlRewrite ?? {}) as {
    hostname?: string;
    path?: { type?: string; replaceFullPath?: string; replacePrefixMatch?: string };
  };
  if (r.hostname !== undefined)
    return { error: `${field}.urlRewrite.hostname: a hostname rewrite is not supported by limitswitch` };
  const p = r.path;
  if (p === undefined) return { error: `${field}.urlRewrite: a path rewrite is required by limitswitch` };
  const value = p.type === 'ReplaceFullPath' ? p.replaceFullPath : p.replacePrefixMatch;
  if ((p.type !== 'ReplaceFullPath' && p.type !== 'ReplacePrefixMatch') || value === undefined)
    return {
      error: `${field}.urlRewrite.path: type must be ReplaceFullPath or ReplacePrefixMatch with its value`,
    };
  if (!PLAIN_PATH.test(value))
    return {
      error: `${field}.urlRewrite.path: "${value}" must be a plain path (no spaces, quotes, "$", "?")`,
    };
  return { type: p.type, value };
}

/**
 * The `rewrite` arguments for one match (quoted by the caller): the path of a `PathPrefix` match is
 * replaced up to a segment boundary, `/v1` + `/` making `/v1/users` `/users` and `/v1` `/`.
 */
export function rewriteArgs(rewrite: PathRewrite, condition: MatchCondition): [string, string] {
  if (rewrite.type === 'ReplaceFullPath') return ['^', rewrite.value];
  const prefix = regexLiteral(condition.path.replace(/\/+$/, ''));
  // a replacement ending in "/" takes the rest without its leading "/"; else the rest keeps it
  return rewrite.value.endsWith('/')
    ? [`^${prefix}/?(.*)$`, `${rewrite.value}$1`]
    : [`^${prefix}(/.*)?$`, `${rewrite.value}$1`];
}
