/**
 * An Ingress path as an HTTPRoute rule's match and filters, keeping ingress-nginx's reading: with
 * `use-regex` or a `rewrite-target` its paths are case-insensitive regular expressions anchored at the
 * start (`location ~* "^<path>"`), and the target replaces the whole URI (`rewrite "(?i)<path>" <target>
 * break`). What a Gateway API object can say exactly is said; what it cannot is named in a warning.
 */
import type { HTTPRouteFilter, HTTPRouteMatch } from '../gateway/gateway-objects.ts';
import type { AnnotationValues } from '../translate/annotations.ts';
import type { NormalPath } from '../translate/ingress-normalize.ts';

export interface MigratedPath {
  readonly match: HTTPRouteMatch;
  readonly filters: readonly HTTPRouteFilter[];
}

/** ingress-nginx's prefix-stripping idiom: `<prefix>(/|$)(.*)` rewritten to `<base>/$2`. */
const STRIP_IDIOM = /^(\/[-._~a-zA-Z0-9/:]*[-._~a-zA-Z0-9:])\(\/\|\$\)\(\.\*\)$/;

function rewriteFilter(type: 'ReplaceFullPath' | 'ReplacePrefixMatch', value: string): HTTPRouteFilter {
  const path =
    type === 'ReplaceFullPath' ? { type, replaceFullPath: value } : { type, replacePrefixMatch: value };
  return { type: 'URLRewrite', urlRewrite: { path } };
}

export function migratePath(
  values: AnnotationValues,
  p: NormalPath,
  warn: (text: string) => void,
): MigratedPath {
  const target = values.rewriteTarget;
  const rewrites = target !== undefined && target !== p.path;
  if (values.useRegex !== true && !rewrites) {
    if (p.pathType === 'ImplementationSpecific')
      warn(
        `${p.field}: pathType ImplementationSpecific becomes PathPrefix (NIC, and ingress-nginx without use-regex, read it as a prefix)`,
      );
    return {
      match: { path: { type: p.pathType === 'Exact' ? 'Exact' : 'PathPrefix', value: p.path } },
      filters: [],
    };
  }
  const idiom = STRIP_IDIOM.exec(p.path);
  if (idiom !== null && rewrites && target.endsWith('/$2') && !target.slice(0, -3).includes('$')) {
    if (/[a-zA-Z]/.test(idiom[1]!))
      warn(
        `${p.field}: "${p.path}" becomes PathPrefix ${idiom[1]}, matched case-sensitively (ingress-nginx matched it case-insensitively)`,
      );
    return {
      match: { path: { type: 'PathPrefix', value: idiom[1]! } },
      filters: [rewriteFilter('ReplacePrefixMatch', target.slice(0, -2))],
    };
  }
  // `~* "^<path>"`: the rest of the URI may follow what the expression matches
  const match: HTTPRouteMatch = { path: { type: 'RegularExpression', value: `(?i:${p.path}).*` } };
  if (!rewrites) return { match, filters: [] };
  if (!target.includes('$')) return { match, filters: [rewriteFilter('ReplaceFullPath', target)] };
  warn(
    `${p.field}: rewrite-target "${target}" uses captures, which a URLRewrite cannot: not carried over (the backend receives the request's path)`,
  );
  return { match, filters: [] };
}
