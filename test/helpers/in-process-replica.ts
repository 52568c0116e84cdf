/**
 * A replica in the test's own process, on the memory store (or the one given), its port 80 on a free
 * port of 127.0.0.1, its error log silent: for tests that reach into it (its workers, its zones).
 */
import { loadConfigText } from '../../src/config/index.ts';
import { ErrorLog } from '../../src/replica/logs/error-log.ts';
import { Replica } from '../../src/replica/replica.ts';
import type { ReplicaOptions } from '../../src/replica/replica-options.ts';
import { openStore } from '../../src/store/open-store.ts';

export async function startInProcessReplica(
  id: string,
  configText: string,
  options: Partial<ReplicaOptions> = {},
): Promise<{ replica: Replica; port: number }> {
  const replica = new Replica({
    id,
    config: loadConfigText(configText, 'nginx.conf'),
    store: openStore(),
    host: '127.0.0.1',
    portMap: new Map([[80, 0]]),
    errorLog: new ErrorLog(() => {}),
    ...options,
  });
  await replica.start();
  return { replica, port: replica.ports.get(80)! };
}
