/**
 * The meaning of a keyval POST/PATCH body, once ajv has checked its shape against the spec:
 * `{"k":"v"}`, `{"k":1}` (numbers are stored as their text, as NGINX Plus does),
 * `{"k":{"value":"v","expire":ms}}`, and for PATCH `{"k":null}` (delete). Pure: time is an argument.
 */
import { parseCidr } from '../engine/net/address-text.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';
import type { KeyvalEntry } from '../store/keyval-store.ts';

/** POST: the entries to add. */
export function parsePostBody(
  body: unknown,
  zone: KeyvalZoneInfo,
  nowMs: number,
): Record<string, KeyvalEntry> {
  // Prototype-free: a key named `__proto__` is data.
  const entries: Record<string, KeyvalEntry> = Object.create(null);
  for (const [key, raw] of bodyPairs(body)) {
    checkKey(key, zone);
    if (raw === null) throw format(`invalid value of key "${key}"`);
    entries[key] = toEntry(key, raw, zone, nowMs);
  }
  return entries;
}

/** PATCH: the one key and its new entry, `null` to delete it. */
export function parsePatchBody(
  body: unknown,
  zone: KeyvalZoneInfo,
  nowMs: number,
): { key: string; entry: KeyvalEntry | null } {
  const pairs = bodyPairs(body);
  if (pairs.length > 1) throw format('only one key can be updated');
  const [key, raw] = pairs[0]!;
  checkKey(key, zone);
  return { key, entry: raw === null ? null : toEntry(key, raw, zone, nowMs) };
}

function bodyPairs(body: unknown): [string, unknown][] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw format('invalid JSON');
  const pairs = Object.entries(body);
  if (pairs.length === 0) throw format('key required');
  return pairs;
}

function checkKey(key: string, zone: KeyvalZoneInfo): void {
  if (key === '') throw format('key required');
  if (zone.type === 'ip' && parseCidr(key) === null) throw format('invalid key format');
}

function toEntry(key: string, raw: unknown, zone: KeyvalZoneInfo, nowMs: number): KeyvalEntry {
  let value: unknown = raw;
  let expireMs: number | null = null;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const object = raw as { value?: unknown; expire?: unknown };
    value = object.value;
    if (object.expire !== undefined) {
      if (!Number.isSafeInteger(object.expire) || (object.expire as number) < 1) {
        throw format(`invalid expire of key "${key}"`);
      }
      if (zone.timeoutMs === null) throw format('keyval timeout is not enabled');
      expireMs = object.expire as number;
    }
  }
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') throw format(`invalid value of key "${key}"`);
  const ttlMs = expireMs ?? zone.timeoutMs;
  return { value, expireAtMs: ttlMs === null ? null : nowMs + ttlMs };
}

function format(text: string): LimitswitchError {
  return new LimitswitchError('KeyvalFormatError', text);
}
