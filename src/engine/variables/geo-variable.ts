/**
 * `geo [$address] $variable { default v; CIDR v; }`: the value of the most specific range containing
 * the address (`$remote_addr` by default), else `default` (empty when absent). Used for allowlists:
 * a geo that yields `""` for trusted clients makes their limit_req key empty, so they are not accounted.
 */
import type { ComplexValue } from '../complex-value.ts';
import { CidrTable } from '../net/cidr-table.ts';
import type { VariableGetter, VariableTable } from './variable-table.ts';

export interface GeoDefinition {
  readonly address: ComplexValue;
  readonly variable: string;
  readonly defaultValue: string;
  readonly entries: readonly { readonly cidr: string; readonly value: string }[];
}

/** Builds the evaluator; throws on an invalid CIDR (the config layer validates first). */
export function compileGeo(geo: GeoDefinition, table: VariableTable): VariableGetter {
  const address = table.compile(geo.address);
  const ranges = new CidrTable<string>();
  for (const entry of geo.entries) {
    if (!ranges.set(entry.cidr, entry.value)) throw new RangeError(`invalid network "${entry.cidr}"`);
  }
  const fallback = geo.defaultValue;
  return (ctx) => ranges.lookup(address(ctx)) ?? fallback;
}
