/**
 * `?wait=applied`: after a write at revision r, poll the replicas' heartbeats until every live replica
 * reports `appliedRevision >= r` on the store's own history (see `replica-history.ts`), bounded by the
 * timeout. Replicas whose heartbeat expired (gone) are not waited for.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LimitswitchError } from '../shared/errors.ts';
import type { ReplicaRecord } from '../store/cluster-registry.ts';
import { divergedReplicas } from './replica-history.ts';

export const DEFAULT_WAIT_MS = 2000;
export const MAX_WAIT_MS = 60_000;

export interface WaitReport {
  revision: number;
  applied: boolean;
  laggards: { id: string; applied_revision: number }[];
}

/** `500ms`, `2s`, `1m`, `3` (seconds, as nginx reads a bare time). Absent → 2 s; capped at 60 s. */
export function parseWaitTimeout(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_MS;
  const match = /^([0-9]{1,6})(ms|s|m)?$/.exec(text);
  if (!match) throw new LimitswitchError('QueryFormatError', 'invalid "timeout" argument');
  const n = Number(match[1]);
  const ms = match[2] === 'ms' ? n : match[2] === 'm' ? n * 60_000 : n * 1000;
  return Math.min(ms, MAX_WAIT_MS);
}

export function laggards(
  replicas: readonly ReplicaRecord[],
  revision: number,
  diverged: ReadonlySet<string>,
): WaitReport['laggards'] {
  return replicas
    .filter((r) => r.live && (r.appliedRevision < revision || diverged.has(r.id)))
    .map((r) => ({ id: r.id, applied_revision: r.appliedRevision }));
}

/**
 * Poll `readReplicas` every `pollMs` until no live replica lags `revision` or `timeoutMs` passed.
 * Store failures while waiting end the wait with the last known laggards (the write itself is done).
 */
export async function waitApplied(
  readReplicas: () => Promise<ReplicaRecord[]>,
  commitAt: (revision: number) => Promise<string | null>,
  revision: number,
  timeoutMs: number,
  pollMs: number,
): Promise<WaitReport> {
  const deadline = performance.now() + timeoutMs;
  let behind: WaitReport['laggards'] = [];
  for (;;) {
    try {
      const replicas = await readReplicas();
      behind = laggards(replicas, revision, await divergedReplicas(replicas, commitAt));
    } catch {
      return { revision, applied: false, laggards: behind };
    }
    if (behind.length === 0) return { revision, applied: true, laggards: [] };
    const left = deadline - performance.now();
    if (left <= 0) return { revision, applied: false, laggards: behind };
    await sleep(Math.min(pollMs, left));
  }
}
