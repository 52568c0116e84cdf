/**
 * nginx's hostname matching for `server_name` and `map … { hostnames; }`: exact names, then the longest
 * leading wildcard (`*.example.com`, and `.example.com` = `example.com` + `*.example.com`), then the
 * longest trailing wildcard (`mail.*`). Regular expressions are matched by the caller, in order.
 */

export class HostnameMatcher<T> {
  private readonly exact = new Map<string, T>();
  /** Leading wildcards keyed by the suffix after `*` (".example.com"), longest first when matching. */
  private readonly head = new Map<string, T>();
  private readonly tail = new Map<string, T>();
  private headLengths: number[] = [];
  private tailLengths: number[] = [];

  /** Adds a name or wildcard; the first definition of a name wins (nginx warns about duplicates). */
  add(pattern: string, value: T): void {
    const name = pattern.toLowerCase();
    if (name.startsWith('*.')) this.addTo(this.head, name.slice(1), value, this.headLengths);
    else if (name.startsWith('.')) {
      if (!this.exact.has(name.slice(1))) this.exact.set(name.slice(1), value);
      this.addTo(this.head, name, value, this.headLengths);
    } else if (name.endsWith('.*')) this.addTo(this.tail, name.slice(0, -1), value, this.tailLengths);
    else if (!this.exact.has(name)) this.exact.set(name, value);
  }

  /** Matches an already lower-cased host. */
  match(host: string): T | undefined {
    const exact = this.exact.get(host);
    if (exact !== undefined) return exact;
    for (const length of this.headLengths) {
      if (length >= host.length) continue;
      const hit = this.head.get(host.slice(host.length - length));
      if (hit !== undefined) return hit;
    }
    for (const length of this.tailLengths) {
      if (length >= host.length) continue;
      const hit = this.tail.get(host.slice(0, length));
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  private addTo(map: Map<string, T>, key: string, value: T, lengths: number[]): void {
    if (map.has(key)) return;
    map.set(key, value);
    if (!lengths.includes(key.length)) {
      lengths.push(key.length);
      lengths.sort((a, b) => b - a);
    }
  }
}

/** True when `pattern` is a valid nginx wildcard or plain name (not a regex). */
export function isWildcard(pattern: string): boolean {
  return pattern.startsWith('*.') || pattern.startsWith('.') || pattern.endsWith('.*');
}
