/**
 * One replica of the sync benchmark, run as a child process: syncs from the store URL in argv[2] and
 * reports, over IPC, the wall-clock time at which each change was applied.
 */
import { KeyvalSync } from '../src/store/keyval-sync.ts';
import { openRedisStore } from '../src/store/redis/open-redis-store.ts';

const url = process.argv[2];
const cluster = process.argv[3];
if (!url || !cluster || !process.send)
  throw new Error('usage: sync-replica.ts <redis url> <cluster> (with IPC)');
const send = process.send.bind(process);

const store = openRedisStore({ url, cluster });
const sync = new KeyvalSync({ store: store.keyvals });
sync.onApply((update) => {
  if (update.kind !== 'change') return;
  // Wall clock with sub-millisecond resolution, comparable across processes on one machine.
  send({ revision: update.change.revision, appliedAtMs: performance.timeOrigin + performance.now() });
});
await sync.start();
send({ ready: sync.state().connected });
process.on('disconnect', () => {
  void sync.stop().then(() => store.close());
});
