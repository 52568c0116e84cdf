/**
 * Keys of the running configuration's keyval zones expire here at their time (this replica's
 * clock), whether or not the store's sweep has run yet: once a second.
 */
import type { Site } from '../engine/http/site.ts';
import type { Clock } from '../shared/clock.ts';

const EXPIRY_INTERVAL_MS = 1000;

export class KeyExpiry {
  readonly #site: () => Site;
  readonly #clock: Clock;
  #timer: NodeJS.Timeout | null = null;

  constructor(site: () => Site, clock: Clock) {
    this.#site = site;
    this.#clock = clock;
  }

  start(): void {
    this.#timer = setInterval(() => this.expire(), EXPIRY_INTERVAL_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
  }

  expire(): void {
    const nowMs = this.#clock.nowMs();
    for (const zone of this.#site().keyvalZones.values()) {
      zone.expire(nowMs);
      zone.publish();
    }
  }
}
