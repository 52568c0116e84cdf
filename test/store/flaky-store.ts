/**
 * Fault injection around a real keyvals port (memory): take it "down" (every call fails as an unreachable
 * store does), drop notifications, or swap in another store (a restart that lost everything).
 */
import { storeUnavailableError } from '../../src/store/keyval-errors.ts';
import type { KeyvalChange, KeyvalStore } from '../../src/store/keyval-store.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';

type Listener = (change: KeyvalChange, epoch: string) => void;

export class FlakyStore {
  target: KeyvalStore;
  down = false;
  /** Drop this notification? */
  drop: (change: KeyvalChange) => boolean = () => false;
  readonly store: KeyvalStore;
  readonly #listeners = new Set<Listener>();

  constructor(target: KeyvalStore = openMemoryStore().keyvals) {
    this.target = target;
    void this.#relay(target);
    this.store = new Proxy({} as KeyvalStore, {
      get: (_, prop: keyof KeyvalStore) => {
        if (prop === 'subscribe') {
          return async (listener: Listener) => {
            if (this.down) throw storeUnavailableError(new Error('down'));
            this.#listeners.add(listener);
            return async () => {
              this.#listeners.delete(listener);
            };
          };
        }
        return async (...args: unknown[]) => {
          if (this.down) throw storeUnavailableError(new Error('down'));
          const method = this.target[prop] as (...a: unknown[]) => Promise<unknown>;
          return method.apply(this.target, args);
        };
      },
    });
  }

  /** Replace the store behind (like Redis restarting without persistence). */
  swap(target: KeyvalStore): void {
    this.target = target;
    void this.#relay(target);
  }

  async #relay(target: KeyvalStore): Promise<void> {
    await target.subscribe((change, epoch) => {
      if (this.target !== target || this.down || this.drop(change)) return;
      for (const listener of this.#listeners) listener(change, epoch);
    });
  }
}
