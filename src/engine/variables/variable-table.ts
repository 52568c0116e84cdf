/**
 * The variables of one configuration: every name gets a slot; values are computed lazily and cached
 * per request (unless volatile), like nginx's indexed variables. Complex values compile to closures.
 */
import { LimitswitchError } from '../../shared/errors.ts';
import type { ComplexValue } from '../complex-value.ts';
import { builtinGetter, type VariableGetter } from './builtin-variables.ts';
import { isLateVariable } from './late-variables.ts';
import type { RequestContext } from './request-context.ts';

export type { VariableGetter };

/** nginx's `unknown "name" variable`, as `RL_ERR_UNKNOWN_VARIABLE`. */
export function unknownVariableError(name: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_UNKNOWN_VARIABLE', `unknown "${name}" variable`);
}

/** Built-ins a `rewrite` changes during a request. */
const REWRITTEN: ReadonlySet<string> = new Set(['uri', 'document_uri', 'args', 'query_string', 'is_args']);

export class VariableTable {
  private readonly slotOf = new Map<string, number>();
  private readonly getters: (VariableGetter | undefined)[] = [];
  private readonly volatile: boolean[] = [];

  get slots(): number {
    return this.getters.length;
  }

  /** Reserves a user variable (map/geo/keyval) so values can refer to it before it is defined. */
  declare(name: string): number {
    let slot = this.slotOf.get(name);
    if (slot === undefined) {
      slot = this.getters.length;
      this.slotOf.set(name, slot);
      this.getters.push(undefined);
      this.volatile.push(false);
    }
    return slot;
  }

  /** Sets the evaluator of a declared variable. */
  define(name: string, getter: VariableGetter, isVolatile = false): void {
    const slot = this.declare(name);
    this.getters[slot] = getter;
    this.volatile[slot] = isVolatile;
  }

  /** A getter that reads `name` through the per-request cache. Throws `RL_ERR_UNKNOWN_VARIABLE`. */
  reader(name: string): VariableGetter {
    if (/^[1-9]$/.test(name)) {
      const index = Number(name);
      return (ctx) => {
        const match = ctx.lastMatch;
        if (match === null) return '';
        match.captures ??= match.regex.exec(match.subject);
        return match.captures?.[index] ?? '';
      };
    }
    let slot = this.slotOf.get(name);
    if (slot === undefined) {
      const builtin = builtinGetter(name);
      if (builtin === undefined) throw unknownVariableError(name);
      slot = this.declare(name);
      this.getters[slot] = builtin;
      // $limit_req_status and $limit_conn_status change during the request; nginx marks them non-cacheable.
      this.volatile[slot] =
        name === 'limit_req_status' || name === 'limit_conn_status' || isLateVariable(name);
      // what a `rewrite` changes is read afresh (nginx does not cache these)
      if (REWRITTEN.has(name) || name.startsWith('arg_')) this.volatile[slot] = true;
    }
    const s = slot;
    const getters = this.getters;
    const volatile = this.volatile;
    return (ctx: RequestContext): string => {
      const cached = ctx.cache[s];
      if (cached !== undefined) return cached;
      const getter = getters[s];
      if (getter === undefined) return '';
      const value = getter(ctx);
      if (!volatile[s]) ctx.cache[s] = value;
      return value;
    };
  }

  /** Compiles a complex value: a constant, one variable, or a concatenation. */
  compile(value: ComplexValue): VariableGetter {
    const parts = value.parts.map((part) => ('text' in part ? part.text : this.reader(part.variable)));
    if (parts.length === 1) {
      const only = parts[0]!;
      return typeof only === 'string' ? () => only : only;
    }
    return (ctx) => {
      let out = '';
      for (const part of parts) out += typeof part === 'string' ? part : part(ctx);
      return out;
    };
  }
}
