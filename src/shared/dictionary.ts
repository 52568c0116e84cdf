/**
 * Stores `value` under a user-chosen key (a keyval key, a zone name) as an own data property, so a key
 * such as `__proto__` is kept as data instead of changing the object's prototype.
 */
export function put<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Text order (UTF-16 code units), for lists sorted by name or id. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
