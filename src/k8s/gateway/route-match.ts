/**
 * Gateway API request matching written as nginx `map` regexes. One map (`$gw_route`) picks, for each
 * request, the HTTPRoute rule match that the Gateway API's precedence selects — exact path, then
 * regular expression, then the longest path prefix; then a method match; then the most header matches;
 * then the most query parameter matches; then the oldest route, its `namespace/name`, the rule and match
 * order — from one string made of the request's scheme, server, method, the headers and query
 * arguments any match names, and the URI, separated by newlines (which no header value can hold; the
 * URI is last, so nothing after it can be forged).
 */

export type PathType = 'Exact' | 'PathPrefix' | 'RegularExpression';

export interface MatchCondition {
  readonly pathType: PathType;
  readonly path: string;
  readonly method: string | null;
  /** Header names lower-cased. */
  readonly headers: readonly {
    readonly name: string;
    readonly type: 'Exact' | 'RegularExpression';
    readonly value: string;
  }[];
  readonly queryParams: readonly {
    readonly name: string;
    readonly type: 'Exact' | 'RegularExpression';
    readonly value: string;
  }[];
}

/** Escapes a literal for a PCRE (and JavaScript) regular expression. */
export function regexLiteral(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}]/g, (c) => `\\${c}`);
}

/** `X-Version` → `http_x_version`, as nginx names header variables. */
export function headerVariable(name: string): string {
  return `http_${name.toLowerCase().replaceAll('-', '_')}`;
}

export function argVariable(name: string): string {
  return `arg_${name}`;
}

/** A prefix matches whole path segments: `/tea` matches `/tea`, `/tea/`, `/tea/x`, not `/teapot`. */
function pathPattern(c: MatchCondition): string {
  if (c.pathType === 'Exact') return `${regexLiteral(c.path)}$`;
  if (c.pathType === 'RegularExpression') {
    const body = c.path.replace(/^\^/, '').replace(/\$$/, '');
    return `(?:${body})$`;
  }
  const trimmed = c.path.replace(/\/+$/, '');
  return trimmed === '' ? '/.*$' : `${regexLiteral(trimmed)}(?:/.*)?$`;
}

function valuePattern(m: { readonly type: string; readonly value: string } | undefined): string {
  if (m === undefined) return '[^\\n]*';
  return m.type === 'Exact' ? regexLiteral(m.value) : `(?:${m.value})`;
}

export interface MatchSource {
  /** Header names (lower case) and query parameter names, in the order of the source string. */
  readonly headers: readonly string[];
  readonly queryParams: readonly string[];
}

/** The map's source: `"$scheme\n$server_name\n$request_method\n$http_a\n…\n$arg_b\n…\n$uri"`. */
export function sourceText(source: MatchSource): string {
  const vars = [
    'scheme',
    'server_name',
    'request_method',
    ...source.headers.map(headerVariable),
    ...source.queryParams.map(argVariable),
    'uri',
  ];
  // `${name}` keeps the variable name apart from the `\n` that follows it.
  return `"${vars.map((v) => `\${${v}}`).join('\\n')}"`;
}

/** The regex (without the leading `~`) a request's source string must match for `c`. */
export function matchPattern(
  c: MatchCondition,
  schemes: 'http' | 'https' | 'both',
  serverName: string,
  source: MatchSource,
): string {
  const parts = [
    schemes === 'both' ? 'https?' : schemes,
    regexLiteral(serverName),
    c.method === null ? '[^\\n]*' : regexLiteral(c.method),
    ...source.headers.map((h) => valuePattern(c.headers.find((m) => m.name === h))),
    ...source.queryParams.map((q) => valuePattern(c.queryParams.find((m) => m.name === q))),
    pathPattern(c),
  ];
  return `^${parts.join('\\n')}`;
}

/** Gateway API precedence between two matches of one hostname (negative: `a` first). */
export function comparePrecedence(a: MatchCondition, b: MatchCondition): number {
  const rank = (t: PathType) => (t === 'Exact' ? 0 : t === 'RegularExpression' ? 1 : 2);
  if (rank(a.pathType) !== rank(b.pathType)) return rank(a.pathType) - rank(b.pathType);
  if (a.pathType === 'PathPrefix' && a.path.length !== b.path.length) return b.path.length - a.path.length;
  if ((a.method === null) !== (b.method === null)) return a.method === null ? 1 : -1;
  if (a.headers.length !== b.headers.length) return b.headers.length - a.headers.length;
  return b.queryParams.length - a.queryParams.length;
}
