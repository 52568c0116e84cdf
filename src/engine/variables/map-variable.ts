/**
 * `map` (ngx_http_map_module): exact strings case-insensitively, then (with `hostnames`) wildcards,
 * then regexes in configuration order against the original value (never for an empty value), then
 * `default` (empty when absent). Values may hold variables and the regex's captures.
 */
import type { ComplexValue } from '../complex-value.ts';
import { HostnameMatcher, isWildcard } from '../hostname-matcher.ts';
import type { NginxRegex } from '../nginx-regex.ts';
import type { VariableGetter, VariableTable } from './variable-table.ts';

export type MapEntryDefinition =
  | { readonly kind: 'exact'; readonly match: string; readonly value: ComplexValue }
  | {
      readonly kind: 'regex';
      /** As written, without `~` / `~*`. */
      readonly pattern: string;
      readonly caseless: boolean;
      /** `pattern`, compiled (case-insensitively when `caseless`). */
      readonly regex: NginxRegex;
      readonly value: ComplexValue;
    };

export interface MapDefinition {
  readonly source: ComplexValue;
  readonly variable: string;
  readonly hostnames: boolean;
  readonly volatile: boolean;
  readonly defaultValue: ComplexValue | null;
  readonly entries: readonly MapEntryDefinition[];
}

/** Builds the evaluator of a map's variable. */
export function compileMap(map: MapDefinition, table: VariableTable): VariableGetter {
  const source = table.compile(map.source);
  const exact = new Map<string, VariableGetter>();
  const wildcards = map.hostnames ? new HostnameMatcher<VariableGetter>() : null;
  const regexes: { re: NginxRegex; value: VariableGetter }[] = [];
  for (const entry of map.entries) {
    const value = table.compile(entry.value);
    if (entry.kind === 'regex') regexes.push({ re: entry.regex, value });
    else if (wildcards !== null && isWildcard(entry.match)) wildcards.add(entry.match, value);
    else if (!exact.has(entry.match.toLowerCase())) exact.set(entry.match.toLowerCase(), value);
  }
  const fallback = map.defaultValue === null ? () => '' : table.compile(map.defaultValue);

  return (ctx) => {
    let value = source(ctx);
    if (wildcards !== null && value.endsWith('.')) value = value.slice(0, -1);
    const lower = value.toLowerCase();
    const hit = exact.get(lower) ?? wildcards?.match(lower);
    if (hit !== undefined) return hit(ctx);
    if (value.length !== 0) {
      for (const { re, value: result } of regexes) {
        if (re.test(value)) {
          ctx.lastMatch = { regex: re, subject: value };
          return result(ctx);
        }
      }
    }
    return fallback(ctx);
  };
}
