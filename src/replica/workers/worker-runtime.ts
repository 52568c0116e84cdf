/**
 * How many worker threads a configuration asks for, and whether this Node.js can run them: each
 * worker listens on the same ports with SO_REUSEPORT (`net.Server.listen({ reusePort })`, Node.js
 * 22.12 and 23.1 on); older ones fail the second listen with EADDRINUSE.
 */
import { availableParallelism } from 'node:os';
import { configError } from '../../config/config-error.ts';
import { MAX_WORKER_PROCESSES } from '../../config/directives/worker-processes.ts';
import type { Config, WorkerProcessesConf } from '../../config/model.ts';
import { isUnixAddress } from '../../engine/net/address-text.ts';

/** `worker_processes`: a number as written; `auto`, the cores here (nginx's ngx_ncpu), at most the cap. */
export function workerCount(conf: WorkerProcessesConf | undefined, cores = availableParallelism()): number {
  if (conf === undefined) return 1;
  return conf.count === 'auto' ? Math.min(cores, MAX_WORKER_PROCESSES) : conf.count;
}

export function reusePortSupported(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** Said once when a configuration asks for workers this Node.js cannot run. */
export function oneWorkerNotice(count: number, version = process.versions.node): string {
  return `"worker_processes" ${count} is not in force: Node.js ${version} cannot listen on one port from several threads (SO_REUSEPORT needs Node.js 22.12 or later; 24 LTS is the supported one), so this replica serves with one worker`;
}

/**
 * Worker threads share a TCP port through SO_REUSEPORT; a UNIX-domain socket has nothing of the kind
 * (one thread binds the path, and a listening socket cannot be handed to another thread), so
 * `listen unix:` with several workers is refused at `worker_processes`.
 */
export function refuseUnixListenWithWorkers(config: Config, workers: number): void {
  if (workers < 2 || config.workerProcesses === undefined) return;
  const unix = config.http.servers.flatMap((s) => s.listen).find((l) => isUnixAddress(l.host));
  if (unix === undefined) return;
  throw configError(
    `"worker_processes" ${workers} cannot serve "listen ${unix.host}" (worker threads share TCP ports only; a UNIX-domain socket is served by one worker)`,
    config.workerProcesses.source,
  );
}
