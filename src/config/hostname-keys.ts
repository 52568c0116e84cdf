/**
 * How ngx_hash_add_key files host names with wildcards (map `hostnames`, server_name): two names
 * that land in the same slot conflict. `.example.com` fills both `example.com` and `*.example.com`.
 */

/** The slots a name fills, or `null` for an invalid wildcard (`*ex.com`, `a.*.com`, `a..b`). */
export function hostnameHashKeys(name: string): string[] | null {
  const lower = name.toLowerCase();
  const stars = [...name].filter((ch) => ch === '*').length;
  if (stars > 1 || name.includes('..') || name.includes('\0')) return null;
  if (name.length > 1 && name.startsWith('.')) return [`exact:${lower.slice(1)}`, `head:${lower.slice(1)}`];
  if (name.length > 2 && name.startsWith('*.')) return [`head:${lower.slice(2)}`];
  if (name.length > 2 && name.endsWith('.*')) return [`tail:${lower.slice(0, -2)}`];
  if (stars > 0) return null;
  return [`exact:${lower}`];
}
