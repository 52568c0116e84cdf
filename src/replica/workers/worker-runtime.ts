/**
 * How many worker threads a configuration asks for, and whether this Node.js can run them: each
 * worker listens on the same ports with SO_REUSEPORT (`net.Server.listen({ reusePort })`, Node.js
 * 22.12 and 23.1 on); older ones fail the second listen with EADDRINUSE.
 */
import { availableParallelism } from 'node:os';
import { MAX_WORKER_PROCESSES } from '../../config/directives/worker-processes.ts';
import type { WorkerProcessesConf } from '../../config/model.ts';

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
