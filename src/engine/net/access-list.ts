/**
 * `allow`/`deny` (ngx_http_access_module): rules checked in order, the first match decides; no match
 * allows. Runs in the ACCESS phase, after limit_req.
 */
import { type Cidr, cidrMatch, parseClientAddr } from './address-text.ts';
import { parseRange } from './cidr-table.ts';

export interface AccessRuleDefinition {
  readonly action: 'allow' | 'deny';
  /** `all`, an address, or a CIDR. */
  readonly from: string;
}

type CompiledRule = { readonly allow: boolean; readonly range: Cidr | null };

export class AccessList {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly AccessRuleDefinition[]) {
    this.rules = rules.map((rule) => {
      const range = rule.from === 'all' ? null : parseRange(rule.from);
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
    const parsed = parseClientAddr(address);
    for (const rule of this.rules) {
      if (rule.range === null || (parsed !== null && cidrMatch(rule.range, parsed))) return rule.allow;
    }
    return true;
  }
}
