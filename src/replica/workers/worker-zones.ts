/**
 * What worker threads do not share yet, refused at the directive that needs it: these would be
 * enforced per thread (N times the limit), which a configuration must not get silently.
 */
import { configError } from '../../config/config-error.ts';
import type { Config, SourceRef } from '../../config/model.ts';

/** For a configuration served by more than one worker (`worker_processes` above 1, or `auto`). */
export function refuseUnsharedWithWorkers(config: Config): void {
  const unshared: { what: string; source: SourceRef }[] = [
    // a zone's servers are shared (max_conns, failures, the round robin); its queue is each worker's
    ...config.http.upstreams.flatMap((u) =>
      u.zone !== undefined && u.queue !== null
        ? [{ what: `the queue of upstream "${u.name}" with a zone`, source: u.zone.source }]
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
