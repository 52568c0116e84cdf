/**
 * The annotations that change where a request goes, as their controllers render them:
 * ingress-nginx's `use-regex`, `rewrite-target`, `app-root`, `permanent-redirect`, `temporal-redirect`,
 * `force-ssl-redirect` (its template's buildLocation/buildProxyPass and its Lua redirect), and NIC's
 * `nginx.org/rewrites` and `nginx.org/redirect-to-https` (its nginx.ingress.tmpl).
 */
import type { AnnotationValues } from './annotations.ts';
import type { LocationFragment } from './fragment.ts';
import type { NormalPath } from './ingress-normalize.ts';
import { directive, quoteArg } from './nginx-text.ts';

/** Where one Ingress path lands and what its location runs before `proxy_pass`. */
export interface PathRouting {
  readonly match: LocationFragment['match'];
  readonly path: string;
  /** ingress-nginx's enforceRegexModifier: every location of the host becomes a regex one. */
  readonly regexHost: boolean;
  readonly rewriteLines: readonly string[];
  /** NIC's `rewrites`: the URI part of `proxy_pass` (nginx replaces the matched prefix with it). */
  readonly proxyPassUri: string;
}

/** ingress-nginx's needsRewrite: a target that differs from the path. */
function needsRewrite(values: AnnotationValues, path: string): boolean {
  return values.rewriteTarget !== undefined && values.rewriteTarget !== path;
}

/** ingress-nginx's redirect annotation: `temporal-redirect` first, codes outside their range defaulted. */
function redirectLine(values: AnnotationValues): string | null {
  if (values.temporalRedirect !== undefined) {
    const code = values.temporalRedirectCode ?? 302;
    return directive('return', String(code >= 300 && code <= 307 ? code : 302), values.temporalRedirect);
  }
  if (values.permanentRedirect !== undefined) {
    const code = values.permanentRedirectCode ?? 301;
    return directive('return', String(code >= 300 && code <= 308 ? code : 301), values.permanentRedirect);
  }
  return null;
}

/** NIC's makeLocationPath and makeRewritePattern for `path-regex`. */
const NIC_PATH_REGEX = {
  case_sensitive: { match: '~', path: (p: string) => `^${p}`, pattern: (p: string) => `^${p}` },
  case_insensitive: { match: '~*', path: (p: string) => `^${p}`, pattern: (p: string) => `(?i)^${p}` },
  exact: { match: '=', path: (p: string) => p, pattern: (p: string) => p },
} as const;

/**
 * An Ingress whose paths both controllers' annotations would read differently (ingress-nginx's
 * `use-regex`/`rewrite-target` beside NIC's `path-regex`/`rewrite-target`): null when there is none.
 */
export function routingConflict(values: AnnotationValues): string | null {
  const nic = values.pathRegex !== undefined || values.nicRewriteTarget !== undefined;
  const ingressNginx = values.useRegex !== undefined || values.rewriteTarget !== undefined;
  return nic && ingressNginx
    ? "ingress-nginx's use-regex/rewrite-target and NIC's path-regex/rewrite-target disagree on what the paths mean; keep one controller's"
    : null;
}

export function routePath(values: AnnotationValues, p: NormalPath): PathRouting {
  const lines: string[] = [];
  // the rewrite module's `return` runs before ingress-nginx's Lua rewrite handler (force-ssl-redirect)
  const redirect = redirectLine(values);
  if (redirect !== null) lines.push(redirect);
  if (values.forceSslRedirect === true)
    lines.push('if ($scheme = http) { return 308 https://$host$request_uri; }');
  if (values.pathRegex !== undefined || values.nicRewriteTarget !== undefined)
    return nicRoute(values, p, lines);
  const regexHost = values.useRegex === true || needsRewrite(values, p.path);
  if (needsRewrite(values, p.path)) lines.push(`rewrite "(?i)${p.path}" ${values.rewriteTarget} break;`);
  return {
    match: regexHost ? '~*' : p.pathType === 'Exact' ? '=' : 'prefix',
    path: regexHost ? `^${p.path}` : p.path,
    regexHost,
    rewriteLines: lines,
    proxyPassUri: values.rewrites?.get(p.backend.service) ?? '',
  };
}

/** NIC's reading of a path with `path-regex` or `rewrite-target` (nginx.ingress.tmpl). */
function nicRoute(values: AnnotationValues, p: NormalPath, lines: string[]): PathRouting {
  const regex = values.pathRegex === undefined ? null : NIC_PATH_REGEX[values.pathRegex];
  const proxyPassUri = values.rewrites?.get(p.backend.service) ?? '';
  // `rewrites` wins over `rewrite-target` (NIC's getRewriteTarget)
  const target = values.rewrites === undefined ? values.nicRewriteTarget : undefined;
  const pattern = regex === null ? p.path : regex.pattern(p.path);
  return {
    match: regex?.match ?? (p.pathType === 'Exact' ? '=' : 'prefix'),
    path: regex === null ? p.path : regex.path(p.path),
    regexHost: false,
    rewriteLines:
      target === undefined ? lines : [...lines, directive('rewrite', quoteArg(pattern), target, 'break')],
    proxyPassUri,
  };
}

/** Server-level rewrite lines an Ingress brings to its host (each host writes one copy of each). */
export function serverRewriteLines(values: AnnotationValues): string[] {
  const lines: string[] = [];
  if (values.redirectToHttps === true)
    lines.push("if ($http_x_forwarded_proto = 'http') { return 301 https://$host$request_uri; }");
  if (values.appRoot !== undefined)
    lines.push(`if ($uri = /) { return 302 $scheme://$http_host${values.appRoot}; }`);
  return lines;
}

/**
 * ingress-nginx's buildLocation under enforceRegex, for a location of another Ingress on a host that
 * enforces it: `~* "^<path>"`, an exact path included.
 */
export function asHostRegex(loc: LocationFragment): LocationFragment {
  if (loc.match === '~*' || loc.match === '~') return loc;
  return { ...loc, match: '~*', path: `^${loc.path}` };
}

/** ingress-nginx's order of a server's locations: by path descending, then (stably) longest first. */
export function ingressNginxOrder(locations: readonly LocationFragment[]): LocationFragment[] {
  const byPath = [...locations].sort((a, b) => (a.path > b.path ? -1 : a.path < b.path ? 1 : 0));
  return byPath.sort((a, b) => b.path.length - a.path.length);
}
