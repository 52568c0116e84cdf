import type { Logger } from 'pino';
import { openStore } from '../store/open-store.ts';
import type { Store } from '../store/store.ts';

/** The shared store for `--redis URL`, or the embedded memory store (one process only) without one. */
export function openCliStore(url: string | undefined, logger: Logger): Store {
  if (!url) logger.warn('no --redis: keyvals live in this process only; other processes cannot share them');
  return openStore({ url });
}
