/**
 * Gateway API hostname intersection between a listener and a route: exact names, and `*.` wildcards
 * that stand for one or more labels. A route without hostnames takes the listener's; a listener without
 * one takes every route hostname.
 */

function covers(wildcard: string, name: string): boolean {
  return wildcard.startsWith('*.') && name.endsWith(wildcard.slice(1)) && name.length > wildcard.length - 1;
}

/** The hostnames a route serves on a listener; `''` stands for any host; empty: no intersection. */
export function intersectHostnames(listener: string | undefined, route: readonly string[]): string[] {
  if (route.length === 0) return [listener ?? ''];
  if (listener === undefined || listener === '') return [...route];
  const out = new Set<string>();
  for (const r of route) {
    if (r === listener || covers(listener, r)) out.add(r);
    else if (covers(r, listener)) out.add(listener);
  }
  return [...out];
}
