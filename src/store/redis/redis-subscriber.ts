/**
 * One pub/sub connection per store, shared by all its subscribers. It resubscribes after every
 * reconnect; what was published meanwhile is lost, which subscribers detect by revision.
 */
import type { Cluster, Redis } from 'ioredis';
import type { KeyvalChange, Unsubscribe } from '../keyval-store.ts';
import { waitUntilReady } from './redis-ready.ts';

type Handler = (change: KeyvalChange, epoch: string) => void;

export class RedisSubscriber {
  readonly #connect: () => Redis | Cluster;
  readonly #channel: string;
  readonly #timeoutMs: number;
  readonly #handlers = new Set<Handler>();
  #client: Redis | Cluster | null = null;

  constructor(connect: () => Redis | Cluster, channel: string, timeoutMs: number) {
    this.#connect = connect;
    this.#channel = channel;
    this.#timeoutMs = timeoutMs;
  }

  /** The pub/sub connection is up (false while Redis is away or before the first subscriber). */
  get connected(): boolean {
    return this.#client?.status === 'ready';
  }

  /** Resolves once SUBSCRIBE is confirmed on a live connection. */
  async add(handler: Handler): Promise<Unsubscribe> {
    const client = this.#ensureClient();
    this.#handlers.add(handler);
    try {
      await waitUntilReady(client, this.#timeoutMs);
      await client.subscribe(this.#channel);
    } catch (err) {
      await this.#remove(handler);
      throw err;
    }
    return () => this.#remove(handler);
  }

  /** Reconnect a connected pub/sub connection (its server is not the master any more). */
  reconnect(): void {
    if (this.#client?.status === 'ready') this.#client.disconnect(true);
  }

  async close(): Promise<void> {
    this.#handlers.clear();
    this.#client?.disconnect();
    this.#client = null;
  }

  #ensureClient(): Redis | Cluster {
    if (this.#client) return this.#client;
    const client = this.#connect();
    client.on('error', () => {});
    client.on('ready', () => {
      // After every (re)connection; a failure here is retried on the next one.
      if (this.#handlers.size > 0) client.subscribe(this.#channel).catch(() => {});
    });
    client.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel) return;
      let parsed: { epoch: string; change: KeyvalChange };
      try {
        parsed = JSON.parse(message) as { epoch: string; change: KeyvalChange };
      } catch {
        return; // not ours; gaps are caught by revision
      }
      for (const handler of [...this.#handlers]) {
        try {
          handler(parsed.change, parsed.epoch);
        } catch {
          // One subscriber's failure must not starve the others.
        }
      }
    });
    this.#client = client;
    return client;
  }

  async #remove(handler: Handler): Promise<void> {
    this.#handlers.delete(handler);
    if (this.#handlers.size === 0 && this.#client) {
      const client = this.#client;
      this.#client = null;
      client.disconnect();
    }
  }
}
