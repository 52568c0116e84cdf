/**
 * Keyval `timeout=` and per-key `expire`, cluster-wide: every control plane asks the store, once a
 * second, to remove the keys whose time has come. The store removes each key exactly once however
 * many control planes sweep (replicas already hide such keys by their timestamp).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../shared/clock.ts';
import type { StoreGateway } from './store-gateway.ts';

export class ExpirySweeper {
  readonly #timer: NodeJS.Timeout;
  #running = false;

  constructor(gateway: StoreGateway, clock: Clock, intervalMs: number, log: FastifyBaseLogger) {
    this.#timer = setInterval(async () => {
      if (this.#running) return;
      this.#running = true;
      try {
        await gateway.call('expireDue', (s) => s.keyvals.expireDue(clock.nowMs()));
      } catch (err) {
        log.debug({ err }, 'expiry sweep failed; retrying at the next tick');
      } finally {
        this.#running = false;
      }
    }, intervalMs);
    // A listening server keeps the process alive; the sweep alone must not.
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
