/**
 * The audit port: who changed what, newest first, bounded. Keyval mutations given an `AuditNote`
 * record their entries in the same atomic step as the change (so a committed change always has its
 * entry); other events (a counter reset, a dry run) are appended. Every backend passes
 * `test/store/contracts/audit.contract.ts`.
 */

export interface AuditEntry {
  readonly timeMs: number;
  readonly tokenId: string | null;
  readonly client: string;
  readonly zone: string;
  readonly key: string | null;
  readonly old: string | null;
  readonly new: string | null;
  readonly revision: number;
  readonly reason: string | null;
}

/** The part of an entry the writer knows before the store answers: who, when, why. */
export type AuditNote = Pick<AuditEntry, 'timeMs' | 'tokenId' | 'client' | 'reason'>;

export interface AuditTrail {
  append(entry: AuditEntry): Promise<void>;
  /** The newest `limit` entries, newest first. */
  recent(limit: number): Promise<AuditEntry[]>;
}

/**
 * The entries a keyval mutation records: one per key it touched (in the order given), or one with
 * `key: null` for a zone emptied while it held nothing.
 */
export function auditEntries(
  note: AuditNote,
  zone: string,
  revision: number,
  changes: readonly { key: string; old: string | null; new: string | null }[],
): AuditEntry[] {
  const entry = (key: string | null, old: string | null, value: string | null): AuditEntry => ({
    timeMs: note.timeMs,
    tokenId: note.tokenId,
    client: note.client,
    zone,
    key,
    old,
    new: value,
    revision,
    reason: note.reason,
  });
  if (changes.length === 0) return [entry(null, null, null)];
  return changes.map((c) => entry(c.key, c.old, c.new));
}
