/**
 * `worker_processes number | auto;` (main context): how many worker threads a replica serves with.
 * `auto` stays `auto` in the model: it is the number of cores of the machine the replica runs on, not
 * of the one that checked the configuration.
 */

import { atoi } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { WorkerProcessesConf } from '../model.ts';
import { duplicate, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/**
 * At most this many workers: during a reload the old workers finish while the new ones serve, and
 * each counts in a slice of its own (engine/counter-slices.ts has 64, one of them the main thread's).
 */
export const MAX_WORKER_PROCESSES = 31;

function workerProcesses(d: Directive, scope: Scope): void {
  if (scope.main.workerProcesses !== null) throw duplicate(d);
  const arg = d.args[0]!;
  if (arg === 'auto') {
    scope.main.workerProcesses = { count: 'auto', source: ref(d) };
    return;
  }
  const count = atoi(arg);
  // nginx's own message (ngx_set_worker_processes); nginx takes 0 and then serves nothing
  if (count === null) throw configError(`"worker_processes" directive invalid value`, d);
  if (count < 1 || count > MAX_WORKER_PROCESSES) {
    throw configError(
      `"worker_processes" ${arg}: a replica serves with 1 to ${MAX_WORKER_PROCESSES} workers (or auto)`,
      d,
    );
  }
  scope.main.workerProcesses = { count, source: ref(d) } satisfies WorkerProcessesConf;
}

export const workerProcessesDirectives: readonly DirectiveSpec[] = [
  { name: 'worker_processes', contexts: ['main'], args: [1], handle: workerProcesses },
];
