import type { Logger } from 'pino';
import type { KeyvalStore } from '../store/keyval-store.ts';
import { MemoryKeyvalStore } from '../store/memory-keyval-store.ts';
import { RedisKeyvalStore } from '../store/redis-keyval-store.ts';

/** The shared store for `--redis URL`, or the embedded memory store (one process only) without one. */
export function openStore(url: string | undefined, logger: Logger): KeyvalStore {
  if (url) return new RedisKeyvalStore({ url });
  logger.warn('no --redis: keyvals live in this process only; other processes cannot share them');
  return new MemoryKeyvalStore();
}
