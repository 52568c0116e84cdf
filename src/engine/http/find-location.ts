/**
 * ngx_http_core_find_location: an exact (`=`) match wins at once; otherwise the longest prefix is
 * remembered and its nested locations searched; unless that prefix is `^~`, the regex locations of the
 * level are then tried in configuration order, and the first match wins (with its own nested search).
 */
import type { NginxRegex } from '../nginx-regex.ts';

export type LocationMatch = '=' | 'prefix' | '^~' | '~' | '~*';

export interface RoutableLocation<L extends RoutableLocation<L>> {
  readonly match: LocationMatch;
  readonly pattern: string;
  /** Compiled for `~` / `~*`; null otherwise. */
  readonly regex: NginxRegex | null;
  readonly locations: readonly L[];
  /**
   * clcf->auto_redirect: a prefix or exact location whose name ends in `/` and that proxies: its name
   * without the slash is answered with a 301 to it.
   */
  readonly autoRedirect?: boolean;
}

/** The location serving `uri`, or null when none matches (nginx then serves at server level). */
export function findLocation<L extends RoutableLocation<L>>(locations: readonly L[], uri: string): L | null {
  return search(locations, uri).location;
}

/**
 * As `findLocation`, with the regex whose match chose it (null: none did): nginx keeps that match's
 * captures for the request (`$1`… in `return`, `proxy_pass`, …).
 */
export function findLocationMatch<L extends RoutableLocation<L>>(
  locations: readonly L[],
  uri: string,
): { readonly location: L | null; readonly regex: NginxRegex | null; readonly autoRedirect?: boolean } {
  return search(locations, uri);
}

interface Found<L> {
  readonly location: L | null;
  /** NGX_OK: an exact or regex match, no further search at outer levels. */
  readonly final: boolean;
  /** The regex that matched last on the way to it. */
  readonly regex: NginxRegex | null;
  /** NGX_DONE: the URI is an auto-redirect location's name without its `/` (FIND_CONFIG answers 301). */
  readonly autoRedirect?: boolean;
}

function search<L extends RoutableLocation<L>>(locations: readonly L[], uri: string): Found<L> {
  let best: L | null = null;
  for (const location of locations) {
    if (location.match === '=') {
      if (location.pattern === uri) return { location, final: true, regex: null };
    } else if (location.match === 'prefix' || location.match === '^~') {
      if (
        uri.startsWith(location.pattern) &&
        (best === null || location.pattern.length > best.pattern.length)
      ) {
        best = location;
      }
    }
  }

  if (best === null || best.pattern.length < uri.length) {
    // ngx_http_core_find_static_location: no location is the URI, but one is the URI and a slash
    // (NGX_DONE, before any shorter prefix's nested locations or the regexes)
    const slashed = `${uri}/`;
    for (const location of locations)
      if (location.autoRedirect === true && location.pattern === slashed)
        return { location, final: true, regex: null, autoRedirect: true };
  }

  let result: L | null = best;
  let nestedRegex: NginxRegex | null = null;
  if (best !== null && best.locations.length !== 0) {
    const nested = search(best.locations, uri);
    if (nested.final) return nested;
    if (nested.location !== null) {
      result = nested.location;
      nestedRegex = nested.regex;
    }
  }

  if (best === null || best.match !== '^~') {
    for (const location of locations) {
      if (location.regex === null || !location.regex.test(uri)) continue;
      const nested = location.locations.length === 0 ? null : search(location.locations, uri);
      if (nested?.location == null) return { location, final: true, regex: location.regex };
      return { location: nested.location, final: true, regex: nested.regex ?? location.regex };
    }
  }
  return { location: result, final: false, regex: nestedRegex };
}
