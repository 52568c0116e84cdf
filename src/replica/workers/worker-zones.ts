/**
 * What worker threads do not share yet, refused at the directive that needs it: these would be
 * enforced per thread (N times the limit), which a configuration must not get silently.
 */
import { configError } from '../../config/config-error.ts';
import type { Config, SourceRef } from '../../config/model.ts';

/** For a configuration served by more than one worker (`worker_processes` above 1, or `auto`). */
export function refuseUnsharedWithWorkers(config: Config): void {
  const unshared: { what: string; source: SourceRef }[] = [
    // without `zone`, nginx's workers count max_conns and queue each for itself too
    ...config.http.upstreams.flatMap((u) =>
      u.zone !== undefined && (u.queue !== null || u.servers.some((s) => (s.maxConns ?? 0) > 0))
        ? [{ what: `upstream "${u.name}"'s zone (its max_conns and queue)`, source: u.zone.source }]
        : [],
    ),
  ];
  const first = unshared[0];
  if (first === undefined) return;
  throw configError(
    `${first.what} is kept per worker thread, not shared between the workers of "worker_processes" yet; use "worker_processes 1" with it`,
    first.source,
  );
}
