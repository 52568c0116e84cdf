/**
 * What the Redis store's ports share: one command connection, one pub/sub connection (opened on the
 * first subscriber), the key schema, the clock, and the bounded way every command is run. Commands
 * never queue while Redis is away: they wait at most `commandTimeoutMs` for a connection and then fail
 * with `StoreUnavailable`.
 */
import type { Cluster, Redis } from 'ioredis';
import { type Clock, systemClock } from '../../shared/clock.ts';
import { ERRORS, hasCode, LimitswitchError } from '../../shared/errors.ts';
import { storeUnavailableError } from '../keyval-errors.ts';
import { type KeySchema, type KeySchemaOptions, keySchema } from './keys.ts';
import {
  createRedisClient,
  type Durability,
  parseRedisUrl,
  type RedisConnectionOptions,
  redactUrl,
} from './redis-connection.ts';
import { waitUntilReady } from './redis-ready.ts';
import { mapError, storeFailureReason } from './redis-replies.ts';
import { defineScripts, runScript, runScriptAndWait, type ScriptName } from './redis-scripts.ts';
import { RedisSubscriber } from './redis-subscriber.ts';
import { SentinelWatch } from './sentinel-watch.ts';

export interface RedisBackendOptions extends RedisConnectionOptions, KeySchemaOptions {
  /** `redis://…`, `rediss://…`, `redis+sentinel://…` or `redis+cluster://…`. */
  readonly url: string;
  /** The store's clock (preconditions, heartbeats, record expiry). Default this host's, set to Redis's TIME. */
  readonly clock?: Clock;
}

export type Multi = ReturnType<Redis['multi']>;

/** How often the store's clock is read again. */
const STORE_CLOCK_REFRESH_MS = 30_000;
/** A reading of the store's clock whose round trip took longer is not taken. */
const STORE_CLOCK_MAX_ROUND_TRIP_MS = 100;

/** The longest a failover holds writes back when Sentinel never says how it ended. */
const FAILOVER_HOLD_MS = 30_000;

export class RedisBackend {
  readonly keys: KeySchema;
  readonly client: Redis | Cluster;
  readonly subscriber: RedisSubscriber;
  readonly nowMs: () => number;
  /** `?wait=N`: writes count once N replicas have them; null when not asked for. */
  readonly durability: Durability | null;
  readonly #timeoutMs: number;
  #watch: SentinelWatch | null = null;
  /** While a Sentinel failover is under way (monotonic ms): writes are held back. */
  #failingOverUntilMs = 0;
  #closed = false;
  /** Redis's TIME less this host's clock, as last measured (half the round trip taken off). */
  #offsetMs = 0;
  #offsetMeasured = false;
  #offsetTimer: NodeJS.Timeout | null = null;
  /** Why the command connection last failed (null once it is ready). */
  #connectionError: Error | null = null;
  readonly #description: string;

  constructor(options: RedisBackendOptions) {
    this.keys = keySchema(options);
    this.#description = redactUrl(options.url);
    this.#timeoutMs = options.commandTimeoutMs ?? 2000;
    const clock = options.clock;
    // The store's clock: this host's, set to Redis's TIME (tests may give a clock of their own).
    this.nowMs = clock === undefined ? () => systemClock.nowMs() + this.#offsetMs : () => clock.nowMs();
    const target = parseRedisUrl(options.url);
    this.durability = target.durability;
    this.client = createRedisClient(options.url, options);
    // Errors surface through commands (the last one names the reason a command could not connect).
    this.client.on('error', (err: Error) => {
      this.#connectionError = err;
    });
    this.client.on('ready', () => {
      this.#connectionError = null;
      if (clock === undefined) void this.#measureOffset();
    });
    if (clock === undefined) {
      this.#offsetTimer = setInterval(() => void this.#measureOffset(), STORE_CLOCK_REFRESH_MS);
      this.#offsetTimer.unref();
    }
    defineScripts(this.client);
    this.subscriber = new RedisSubscriber(
      () => createRedisClient(options.url, options, 'subscriber'),
      this.keys.channel,
      this.#timeoutMs,
    );
    if (target.kind === 'sentinel') {
      this.#watch = new SentinelWatch(target.options, {
        started: () => {
          this.#failingOverUntilMs = performance.now() + FAILOVER_HOLD_MS;
        },
        switched: () => {
          // Connected to the old master: reconnect now (Sentinel names the new one). A client already
          // reconnecting asks Sentinel anyway.
          if (this.client.status === 'ready') this.client.disconnect(true);
          this.subscriber.reconnect();
          this.#failingOverUntilMs = 0;
        },
        abandoned: () => {
          this.#failingOverUntilMs = 0;
        },
      });
    }
  }

  /** The command connection's state, for metrics and readiness. */
  get connected(): boolean {
    return this.client.status === 'ready';
  }

  /** Run one command once connected, bounded; Redis failures become the store's error codes. */
  async run<T>(command: (client: Redis | Cluster) => Promise<T>): Promise<T> {
    this.assertOpen();
    try {
      await waitUntilReady(this.client, this.#timeoutMs);
      return await command(this.client);
    } catch (err) {
      throw this.named(mapError(err));
    }
  }

  /**
   * `StoreUnavailable` with a cause that names this store and why (`redis://h:6379: connection refused
   * (connect ECONNREFUSED h:6379)`): the connection's own error when it never got ready, which says
   * more than "not connected within 2000 ms". The API still answers `keyval store unavailable`.
   */
  named(err: Error): Error {
    if (!hasCode(err, 'StoreUnavailable') || err.message !== ERRORS.StoreUnavailable.text) return err;
    const cause = err.cause instanceof Error ? err.cause : null;
    const notConnected = cause === null || /not connected within|connection closed/.test(cause.message);
    const reason = (notConnected ? this.#connectionError : null) ?? cause ?? this.#connectionError;
    if (reason === null) return err;
    return storeUnavailableError(new Error(`${this.#description}: ${storeFailureReason(reason)}`));
  }

  /** Run one Lua script (see `redis-scripts.ts`). */
  script(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    return this.run((client) => runScript(client, name, keys, args));
  }

  /**
   * Run a script that writes. With `?wait=N`, the write is answered only once N replicas have it: a
   * write the master took but no replica confirmed in time fails with `StoreUnavailable` — a
   * failover now would lose it, so it is not acknowledged (it may still be there: read before retrying).
   */
  async write(name: ScriptName, keys: string[], args: (string | number)[]): Promise<unknown> {
    if (this.#failingOverUntilMs > performance.now()) {
      throw storeUnavailableError(
        new Error('a Sentinel failover is under way; writes resume on the new master'),
      );
    }
    const wait = this.durability;
    if (wait === null) return this.script(name, keys, args);
    const { reply, acknowledged } = await this.run((client) =>
      runScriptAndWait(client, name, keys, args, wait),
    );
    if (acknowledged < wait.replicas) {
      throw new LimitswitchError(
        'StoreUnavailable',
        `the write reached the master but ${acknowledged} of ${wait.replicas} replicas within ${wait.timeoutMs} ms; not acknowledged`,
      );
    }
    return reply;
  }

  /** Run MULTI … EXEC; any failed command fails the call. */
  async exec(build: (m: Multi) => Multi): Promise<void> {
    const results = await this.run((client) => build(client.multi() as Multi).exec());
    for (const [err] of results ?? []) if (err) throw mapError(err);
  }

  assertOpen(): void {
    if (this.#closed) throw storeUnavailableError(new Error('store closed'));
  }

  /**
   * Heartbeats are written and judged on the store's clock, so replicas whose clocks disagree still
   * agree on who is live. A failed measurement keeps the last one.
   */
  async #measureOffset(): Promise<void> {
    try {
      const sentMs = systemClock.nowMs();
      const [seconds, micros] = await this.client.time();
      const receivedMs = systemClock.nowMs();
      // an answer that took long says little of when it was read (a store that was frozen)
      if (receivedMs - sentMs <= STORE_CLOCK_MAX_ROUND_TRIP_MS) {
        this.#offsetMs = Number(seconds) * 1000 + Number(micros) / 1000 - (sentMs + receivedMs) / 2;
        this.#offsetMeasured = true;
        return;
      }
    } catch {
      // the store is away: its clock is read again when it is back
    }
    // never read yet: again in a second rather than at the next refresh
    if (!this.#offsetMeasured && !this.#closed) setTimeout(() => void this.#measureOffset(), 1000).unref();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#offsetTimer !== null) clearInterval(this.#offsetTimer);
    this.#watch?.close();
    await this.subscriber.close();
    this.client.disconnect();
  }
}
