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

/**
 * Why a Redis call failed, in a word a user can act on: refused (nothing listens), host not found,
 * timed out (paused, overloaded, or a network dropping packets), authentication failed, connection
 * lost; with the client's own text after it.
 */
export function storeFailureReason(err: Error): string {
  const code = (err as { code?: unknown }).code;
  const text = err.message;
  const reason =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'host not found'
        : /\b(WRONGPASS|NOAUTH|NOPERM)\b|invalid password|auth/i.test(text)
          ? 'authentication failed'
          : code === 'ETIMEDOUT' || /timed? ?out|not connected within|no answer/i.test(text)
            ? 'timed out'
            : code === 'ECONNRESET' || code === 'EPIPE' || /connection (is )?closed/i.test(text)
              ? 'connection lost'
              : 'failed';
  return `${reason} (${text})`;
}
