/**
 * A zone's NGINX Plus counters in shared memory, as nginx keeps them in the zone, so that every worker
 * thread's requests count in one zone. Each thread that counts writes a slice of its own (a float64 per
 * field, one cache line per slice): an increment is a plain store no other thread races, so nothing is
 * lost and no atomic instruction is paid; a reader sums the slices. A slice outlives the thread that
 * wrote it (a dead worker's counts stay, as in nginx's zone); the thread started in its place is given
 * the same slice and goes on from its numbers.
 */
import type { Counters } from './counters.ts';

/** Slices a zone's counters have: the threads that may count in one zone at once. */
export const COUNTER_SLICES = 64;
/** float64s a slice takes: a 64-byte line, so that no two threads write one line. */
const SLICE_F64S = 8;

export class CounterSlices<F extends string> {
  /** The slices (postMessage-able): another thread's `CounterSlices` on it counts in the same zone. */
  readonly memory: SharedArrayBuffer;
  /** This thread's slice, a float64 per field in the family's order: `own[i]++` on the data path. */
  readonly own: Float64Array;
  /** The zone's counters, every slice summed; read-only (count through {@link own}). */
  readonly counters: Readonly<Counters<F>>;

  /** New counters, or, given `memory`, the same counters, counted in slice `slice` by this thread. */
  constructor(fields: readonly F[], memory?: SharedArrayBuffer, slice = 0) {
    if (fields.length > SLICE_F64S) throw new RangeError(`a zone counts at most ${SLICE_F64S} fields`);
    if (!Number.isInteger(slice) || slice < 0 || slice >= COUNTER_SLICES)
      throw new RangeError(`counter slice ${slice} is not one of 0..${COUNTER_SLICES - 1}`);
    this.memory = memory ?? new SharedArrayBuffer(COUNTER_SLICES * SLICE_F64S * 8);
    const all = new Float64Array(this.memory);
    this.own = all.subarray(slice * SLICE_F64S, slice * SLICE_F64S + fields.length);
    const counters = {} as Counters<F>;
    fields.forEach((field, i) => {
      Object.defineProperty(counters, field, {
        enumerable: true,
        get: () => {
          let sum = 0;
          for (let at = i; at < all.length; at += SLICE_F64S) sum += all[at]!;
          return sum;
        },
      });
    });
    this.counters = counters;
  }
}
