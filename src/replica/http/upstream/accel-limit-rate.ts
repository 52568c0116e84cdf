/**
 * An upstream answer's `X-Accel-Limit-Rate` (ngx_http_upstream_process_limit_rate): the client
 * answer's rate in bytes/s, over the location's `limit_rate`; a value that is not a number is none.
 * The field itself is not relayed (forward-headers.ts).
 */
import { atoi } from '../../../engine/scalar-values.ts';

/** The last `X-Accel-Limit-Rate` that is a number (nginx reads each in turn); null: none. */
export function upstreamLimitRate(rawHeaders: readonly (Buffer | string)[]): number | null {
  let rate: number | null = null;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 18 || name.toString().toLowerCase() !== 'x-accel-limit-rate') continue;
    rate = atoi(rawHeaders[i + 1]!.toString()) ?? rate;
  }
  return rate;
}
