/** Turning Redis replies and errors into the store's values and error codes. */
import { isLimitswitchError, LimitswitchError } from '../../shared/errors.ts';
import { storeUnavailableError } from '../keyval-errors.ts';
import type { KeyvalEntry } from '../keyval-store.ts';

/** Redis replies that mean "not now" (failover, loading, cluster reconfiguring), not "broken". */
const TRANSIENT = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|NOREPLICAS|MOVED|ASK)\b/;

/** Any failure of a Redis call → `StoreUnavailable`, or `RL_ERR_STORE_PROTOCOL` for a real error reply. */
export function mapError(err: unknown): Error {
  if (isLimitswitchError(err)) return err;
  const error = err instanceof Error ? err : new Error(String(err));
  if (error.name === 'ReplyError' && !TRANSIENT.test(error.message)) {
    return new LimitswitchError('RL_ERR_STORE_PROTOCOL', `keyval store error: ${error.message}`, {
      cause: error,
    });
  }
  return storeUnavailableError(error);
}

/** A `kv:<zone>` hash value → entry. */
export function decodeEntry(json: unknown): KeyvalEntry {
  const entry = JSON.parse(String(json)) as KeyvalEntry;
  return { value: entry.value, expireAtMs: entry.expireAtMs ?? null };
}

/** `[k1, v1, k2, v2, …]` (HGETALL-style script replies) → pairs. */
export function* pairs(flat: unknown): Generator<[string, unknown]> {
  const list = (flat ?? []) as unknown[];
  for (let i = 0; i < list.length; i += 2) yield [String(list[i]), list[i + 1]];
}
