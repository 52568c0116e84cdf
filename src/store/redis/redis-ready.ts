/** Waiting for an ioredis client to be connected, bounded (commands never sit in an offline queue). */
import type { Cluster, Redis } from 'ioredis';
import { storeUnavailableError } from '../keyval-errors.ts';

/**
 * One wait per client for its next `ready` (or `end`), whatever the number of callers waiting: during
 * an outage every command waits, and a listener pair each would pass EventEmitter's leak warning.
 */
const nextReady = new WeakMap<Redis | Cluster, Promise<void>>();

function readyOrEnd(client: Redis | Cluster): Promise<void> {
  let wait = nextReady.get(client);
  if (wait === undefined) {
    wait = new Promise<void>((resolve, reject) => {
      const onReady = () => {
        client.off('end', onEnd);
        nextReady.delete(client);
        resolve();
      };
      const onEnd = () => {
        client.off('ready', onReady);
        nextReady.delete(client);
        reject(storeUnavailableError(new Error('connection closed')));
      };
      client.once('ready', onReady);
      client.once('end', onEnd);
    });
    // a wait whose callers all timed out is not an unhandled rejection
    wait.catch(() => {});
    nextReady.set(client, wait);
  }
  return wait;
}

/** Resolve once `client` is ready; `StoreUnavailable` after `timeoutMs` or if it was closed. */
export async function waitUntilReady(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'end') throw storeUnavailableError(new Error('connection closed'));
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      readyOrEnd(client),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(storeUnavailableError(new Error(`not connected within ${timeoutMs} ms`))),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
