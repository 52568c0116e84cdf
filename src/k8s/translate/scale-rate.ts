import type { Rate } from './annotation-values.ts';

/**
 * `nginx.org/limit-req-scale`: the rate divided by the number of live replicas, with NIC's arithmetic
 * (`scaleRatelimit`): divide, and if a per-second rate falls below 1 switch to per-minute (× 60), then
 * round down. 10r/s over 3 → 3r/s; 1r/s over 4 → 15r/m. One deviation: NIC can produce `0r/m`, which
 * nginx refuses; we stop at `1r/m`.
 */
export function scaleRate(rate: Rate, replicas: number): Rate {
  if (!Number.isInteger(replicas) || replicas < 1) return rate;
  let value = rate.count / replicas;
  let unit = rate.unit;
  if (unit === 'r/s' && value < 1) {
    value *= 60;
    unit = 'r/m';
  }
  return { count: Math.max(1, Math.floor(value)), unit };
}
