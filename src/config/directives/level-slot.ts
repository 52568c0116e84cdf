/**
 * A directive that sets one field of its level (http, server or location) from its argument, once:
 * nginx's ngx_conf_set_{num,flag,enum}_slot, whose second use at the same level is
 * `"name" directive is duplicate`. limit_req_status, limit_conn_dry_run, priority_level_log_level and
 * their kin are this handler with another field and another parser.
 */
import type { LevelBuilder } from '../builders.ts';
import type { Directive } from '../directive.ts';
import { duplicate, levelOf } from './helpers.ts';
import type { DirectiveSpec } from './types.ts';

/** The level fields a directive sets once (null: not set at this level). */
type LevelSlotField = {
  [K in keyof LevelBuilder]: null extends LevelBuilder[K] ? K : never;
}[keyof LevelBuilder];

/** The handler: the duplicate check first, then `parse` (which throws the directive's own message). */
export function levelSlot<K extends LevelSlotField>(
  field: K,
  parse: (d: Directive) => NonNullable<LevelBuilder[K]>,
): DirectiveSpec['handle'] {
  return (d, scope) => {
    const level = levelOf(scope);
    if (level[field] !== null) throw duplicate(d);
    level[field] = parse(d);
  };
}
