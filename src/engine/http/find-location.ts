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
}

/** The location serving `uri`, or null when none matches (nginx then serves at server level). */
export function findLocation<L extends RoutableLocation<L>>(locations: readonly L[], uri: string): L | null {
  return search(locations, uri).location;
}

interface Found<L> {
  readonly location: L | null;
  /** NGX_OK: an exact or regex match, no further search at outer levels. */
  readonly final: boolean;
}

function search<L extends RoutableLocation<L>>(locations: readonly L[], uri: string): Found<L> {
  let best: L | null = null;
  for (const location of locations) {
    if (location.match === '=') {
      if (location.pattern === uri) return { location, final: true };
    } else if (location.match === 'prefix' || location.match === '^~') {
      if (
        uri.startsWith(location.pattern) &&
        (best === null || location.pattern.length > best.pattern.length)
      ) {
        best = location;
      }
    }
  }

  let result: L | null = best;
  if (best !== null && best.locations.length !== 0) {
    const nested = search(best.locations, uri);
    if (nested.final) return nested;
    if (nested.location !== null) result = nested.location;
  }

  if (best === null || best.match !== '^~') {
    for (const location of locations) {
      if (location.regex === null || !location.regex.test(uri)) continue;
      const nested = location.locations.length === 0 ? null : search(location.locations, uri).location;
      return { location: nested ?? location, final: true };
    }
  }
  return { location: result, final: false };
}
