/**
 * `allow`/`deny` (ngx_http_access_module): rules checked in order, the first match decides; no match
 * allows. Runs in the ACCESS phase, after limit_req. `unix:` matches only clients of a UNIX-domain
 * socket (their address is `unix:`), an address or CIDR only IP clients, `all` every client.
 */
import type { LogLine } from '../log-line.ts';
import { type Cidr, cidrMatch, parseClientAddr } from './address-text.ts';
import { parseRange } from './cidr-table.ts';

/** ngx_http_access_module's error-log line for a request its rules deny (`satisfy all`, the only mode). */
export const ACCESS_FORBIDDEN: LogLine = Object.freeze({
  level: 'error',
  message: 'access forbidden by rule',
});

export interface AccessRuleDefinition {
  readonly action: 'allow' | 'deny';
  /** `all`, `unix:`, an address, or a CIDR. */
  readonly from: string;
}

/** The client address of a UNIX-domain socket, and the rule that matches only it. */
const UNIX = 'unix:';

type CompiledRule = { readonly allow: boolean; readonly range: Cidr | 'all' | 'unix' };

export class AccessList {
  private readonly rules: CompiledRule[];

  constructor(rules: readonly AccessRuleDefinition[]) {
    this.rules = rules.map((rule) => {
      const allow = rule.action === 'allow';
      if (rule.from === 'all') return { allow, range: 'all' };
      if (rule.from === UNIX) return { allow, range: 'unix' };
      const range = parseRange(rule.from);
      if (range === null) throw new RangeError(`invalid parameter "${rule.from}"`);
      return { allow, range };
    });
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** True when `address` may pass. */
  allows(address: string): boolean {
    if (this.rules.length === 0) return true;
    const unix = address === UNIX;
    const parsed = unix ? null : parseClientAddr(address);
    for (const { allow, range } of this.rules) {
      if (range === 'all') return allow;
      if (range === 'unix') {
        if (unix) return allow;
      } else if (parsed !== null && cidrMatch(range, parsed)) return allow;
    }
    return true;
  }
}
