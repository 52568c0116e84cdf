/**
 * NGINX Plus's per-zone counters (`passed`, `rejected`, …) as a tuple of named integers, and the
 * arithmetic everyone does on them: zeros, sums, the change since a baseline. Each limiter names its
 * fields once (`LIMIT_REQ_COUNTERS`); stores, flushers, routes and metrics take them from there.
 */

/** One zone's counters: field → count. */
export type Counters<F extends string = string> = Record<F, number>;

/** A limiter's counters: the name stores keep them under, and the fields in the API's order. */
export interface CounterFamily<F extends string = string> {
  readonly kind: string;
  readonly fields: readonly F[];
}

export function zeroCounters<F extends string>(fields: readonly F[]): Counters<F> {
  const out = {} as Counters<F>;
  for (const field of fields) out[field] = 0;
  return out;
}

/** `into += from`, field by field; a field `from` lacks counts as 0. */
export function addCountersInto<F extends string>(
  into: Counters<F>,
  from: Readonly<Partial<Counters<F>>>,
  fields: readonly F[],
): Counters<F> {
  for (const field of fields) into[field] += from[field] ?? 0;
  return into;
}

/** `now - base`, or `null` when nothing changed. */
export function counterDelta<F extends string>(
  now: Readonly<Counters<F>>,
  base: Readonly<Counters<F>> | undefined,
  fields: readonly F[],
): Counters<F> | null {
  let changed = false;
  const delta = {} as Counters<F>;
  for (const field of fields) {
    delta[field] = now[field] - (base?.[field] ?? 0);
    if (delta[field] !== 0) changed = true;
  }
  return changed ? delta : null;
}

/** The listed fields of `counters` (the API's `?fields=`); `null` keeps all. */
export function pickCounters<F extends string>(
  counters: Readonly<Counters<F>>,
  fields: readonly F[],
  only: ReadonlySet<string> | null,
): Partial<Counters<F>> {
  const out: Partial<Counters<F>> = {};
  for (const field of fields) if (only === null || only.has(field)) out[field] = counters[field];
  return out;
}
