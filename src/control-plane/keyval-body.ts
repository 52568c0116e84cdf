/**
 * The meaning of a keyval POST/PATCH body. ajv has checked its shape against the spec already (an
 * object, at least one key, no empty key, PATCH one key only, values a string, a number, `null` for
 * PATCH or `{"value", "expire"}` with `expire` a positive integer); what is left needs the zone: `ip`
 * keys are addresses, `expire` only where the zone has `timeout=`; and what the store cannot hold as
 * given (a NUL in a key, a lone surrogate: `keyval-text.ts`). Numbers are stored as their text,
 * as NGINX Plus does. Pure: time is an argument.
 */
import { isKeyvalKey } from '../engine/keyval/keyval-zone.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';
import type { KeyvalEntry } from '../store/keyval-store.ts';
import { unstorableKey, unstorableValue } from '../store/keyval-text.ts';

type BodyValue = string | number | { readonly value: string | number; readonly expire?: number };

/** POST: the entries to add. */
export function parsePostBody(
  body: unknown,
  zone: KeyvalZoneInfo,
  nowMs: number,
): Record<string, KeyvalEntry> {
  // Prototype-free: a key named `__proto__` is data.
  const entries: Record<string, KeyvalEntry> = Object.create(null);
  for (const [key, raw] of Object.entries(body as Record<string, BodyValue>)) {
    checkKey(key, zone);
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
  const [key, raw] = Object.entries(body as Record<string, BodyValue | null>)[0]!;
  checkKey(key, zone);
  return { key, entry: raw === null ? null : toEntry(key, raw, zone, nowMs) };
}

function checkKey(key: string, zone: KeyvalZoneInfo): void {
  if (!isKeyvalKey(zone.type, key)) throw format('invalid key format');
  const unstorable = unstorableKey(key);
  if (unstorable !== null) throw format(unstorable);
}

function toEntry(key: string, raw: BodyValue, zone: KeyvalZoneInfo, nowMs: number): KeyvalEntry {
  const value = typeof raw === 'object' ? raw.value : raw;
  const expireMs = typeof raw === 'object' ? (raw.expire ?? null) : null;
  if (expireMs !== null && zone.timeoutMs === null) throw format('keyval timeout is not enabled');
  const ttlMs = expireMs ?? zone.timeoutMs;
  const text = String(value);
  const unstorable = unstorableValue(key, text);
  if (unstorable !== null) throw format(unstorable);
  return { value: text, expireAtMs: ttlMs === null ? null : nowMs + ttlMs };
}

function format(text: string): LimitswitchError {
  return new LimitswitchError('KeyvalFormatError', text);
}
