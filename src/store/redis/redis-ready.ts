/** Waiting for an ioredis client to be connected, bounded (commands never sit in an offline queue). */
import type { Cluster, Redis } from 'ioredis';
import { storeUnavailableError } from '../keyval-errors.ts';

/** Resolve once `client` is ready; `StoreUnavailable` after `timeoutMs` or if it was closed. */
export async function waitUntilReady(client: Redis | Cluster, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'end') throw storeUnavailableError(new Error('connection closed'));
  await new Promise<void>((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      client.off('end', onEnd);
      resolve();
    };
    const onEnd = () => {
      clearTimeout(timer);
      client.off('ready', onReady);
      reject(storeUnavailableError(new Error('connection closed')));
    };
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      client.off('end', onEnd);
      reject(storeUnavailableError(new Error(`not connected within ${timeoutMs} ms`)));
    }, timeoutMs);
    client.once('ready', onReady);
    client.once('end', onEnd);
  });
}
