/**
 * Keys and values the store can hold exactly as given. A lone UTF-16 surrogate has no UTF-8 form (Redis
 * would keep U+FFFD while the replicas kept the surrogate: two different keys), and a NUL byte in a key
 * would collide with the store's own separators. Both are refused at the edge, with NGINX Plus's words.
 */

/** Why `key` cannot be stored, or null. */
export function unstorableKey(key: string): string | null {
  if (key.includes('\0')) return 'invalid key format';
  if (!key.isWellFormed()) return 'invalid key format';
  return null;
}

/** Why `value` (of `key`) cannot be stored, or null. */
export function unstorableValue(key: string, value: string): string | null {
  return value.isWellFormed() ? null : `invalid value of key "${key}"`;
}
