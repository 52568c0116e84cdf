/**
 * `allow`/`deny` (ngx_http_access_module): rules checked in order, the first match decides; no match
 * allows. Runs in the ACCESS phase, after limit_req.
 */
import { type ParsedCidr, parseAddress, parseCidr } from './cidr-table.ts';

export interface AccessRuleDefinition {
  readonly action: 'allow' | 'deny';
  /** `all`, an address, or a CIDR. */
  readonly from: string;
}

type CompiledRule = { readonly allow: boolean; readonly range: ParsedCidr | null };

export class AccessList {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly AccessRuleDefinition[]) {
    this.rules = rules.map((rule) => {
      const range = rule.from === 'all' ? null : parseCidr(rule.from);
      if (rule.from !== 'all' && range === null) throw new RangeError(`invalid parameter "${rule.from}"`);
      return { allow: rule.action === 'allow', range };
    });
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** True when `address` may pass. */
  allows(address: string): boolean {
    if (this.rules.length === 0) return true;
    const parsed = parseAddress(address);
    for (const rule of this.rules) {
      if (rule.range === null || (parsed !== null && contains(rule.range, parsed))) return rule.allow;
    }
    return true;
  }
}

function contains(range: ParsedCidr, address: ParsedCidr): boolean {
  if ('v4' in range) {
    if (!('v4' in address)) return false;
    const mask = range.bits === 0 ? 0 : (0xffffffff << (32 - range.bits)) >>> 0;
    return (address.v4 & mask) >>> 0 === range.v4;
  }
  if (!('v6' in address)) return false;
  const nibbles = range.bits >> 2;
  if (address.v6.slice(0, nibbles) !== range.v6.slice(0, nibbles)) return false;
  const rest = range.bits & 3;
  if (rest === 0) return true;
  const mask = (0xf << (4 - rest)) & 0xf;
  return (Number.parseInt(address.v6[nibbles]!, 16) & mask) === Number.parseInt(range.v6[nibbles]!, 16);
}
