/**
 * This replica's heartbeat: its zones and its info to the store's registry, live for a TTL, every
 * interval and at once after it applies keyval changes (so `?wait=applied` writers hear of it
 * without waiting for the next beat). It keeps when the last beat the store took was sent: past
 * that plus the TTL the store may count this replica gone, which cluster-wide limits hold to.
 */
import type { Clock } from '../../shared/clock.ts';
import type { RegistryWriter, ReplicaInfo } from '../../store/cluster-registry.ts';
import type { StoreTrouble } from '../../store/store-trouble.ts';

export const HEARTBEAT_INTERVAL_MS = 1000;
export const HEARTBEAT_TTL_MS = 5000;

export interface HeartbeatOptions {
  readonly registry: Pick<RegistryWriter, 'registerZones' | 'heartbeat'>;
  /** What each beat says (read anew per beat: applied revision, zones, upstreams…). */
  info(): ReplicaInfo;
  readonly clock: Clock;
  readonly intervalMs?: number;
  readonly ttlMs?: number;
  /** Failed beats are said once per outage, with the counter flushes' failures. */
  readonly storeTrouble: StoreTrouble;
}

export class Heartbeat {
  readonly ttlMs: number;
  readonly #options: HeartbeatOptions;
  #timer: NodeJS.Timeout | null = null;
  /** Set once started and never unset: changes applied while the replica stops still report at once. */
  #started = false;
  #queued = false;
  #acknowledgedSentAtMs: number | null = null;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
    this.ttlMs = options.ttlMs ?? HEARTBEAT_TTL_MS;
  }

  /** When the last beat the store took was sent (this replica's clock), or null before any. */
  get acknowledgedSentAtMs(): number | null {
    return this.#acknowledgedSentAtMs;
  }

  /** The periodic beats (the first one is the caller's `report()`). */
  start(): void {
    this.#started = true;
    this.#timer = setInterval(() => void this.report(), this.#options.intervalMs ?? HEARTBEAT_INTERVAL_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
  }

  /** One beat; a store that fails it is store trouble, never an error. */
  async report(): Promise<void> {
    const { registry, clock, storeTrouble } = this.#options;
    try {
      await registry.registerZones(this.#options.info().keyvalZones);
      const sentAtMs = clock.nowMs();
      await registry.heartbeat(this.#options.info(), this.ttlMs);
      this.#acknowledgedSentAtMs = Math.max(this.#acknowledgedSentAtMs ?? sentAtMs, sentAtMs);
      storeTrouble.answered();
    } catch (err) {
      storeTrouble.failed('heartbeat', err, 'enforcing the last known switches (fail-static)');
    }
  }

  /** A beat on the next turn, once started; changes applied together share it. */
  reportSoon(): void {
    if (this.#queued || !this.#started) return;
    this.#queued = true;
    setImmediate(() => {
      this.#queued = false;
      void this.report();
    });
  }
}
