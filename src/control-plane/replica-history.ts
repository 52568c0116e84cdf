/**
 * Whether a replica's applied state is a point of the store's history: its applied revision with the
 * commit id the store has for that revision. A replica that applied a history the store no longer has
 * (the store was restored from an older snapshot, or a failover lost writes) may report a revision as
 * high as the store's and still be wrong; it reloads within its next check, and until then it is not
 * "applied" for `?wait=applied` and shows as `diverged` in `/cluster/replicas`.
 */
import type { ReplicaRecord } from '../store/cluster-registry.ts';

/**
 * The ids of live replicas whose applied (revision, commit) the store does not have. A revision the
 * bounded log no longer holds cannot be checked and counts as the store's; so does a replica that
 * reports no commit (a version before commit ids).
 */
export async function divergedReplicas(
  replicas: readonly ReplicaRecord[],
  commitAt: (revision: number) => Promise<string | null>,
): Promise<Set<string>> {
  const live = replicas.filter((r) => r.live && r.appliedCommit !== undefined && r.appliedCommit !== '');
  const revisions = [...new Set(live.map((r) => r.appliedRevision))];
  const commits = new Map(
    await Promise.all(revisions.map(async (revision) => [revision, await commitAt(revision)] as const)),
  );
  const diverged = new Set<string>();
  for (const replica of live) {
    const commit = commits.get(replica.appliedRevision);
    if (commit !== null && commit !== undefined && commit !== replica.appliedCommit) diverged.add(replica.id);
  }
  return diverged;
}
