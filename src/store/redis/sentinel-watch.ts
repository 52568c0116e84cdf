/**
 * Watching the Sentinels during a failover, so no write goes to a master that is being replaced.
 * Sentinel promotes a replica first and announces the new master (`+switch-master`) only after it
 * reconfigured the other replicas, a second or two later; it demotes the old master about ten seconds
 * after that. A client left alone keeps writing to the old master all that time, and every write it
 * acknowledges there is lost when the old master resyncs from the new one.
 *
 * So: from the failover's first step (`+try-failover`, `+failover-state-select-slave`) writes are held
 * back (refused as unavailable, the caller retries), and on `+switch-master` the clients reconnect —
 * Sentinel now names the new master — and writes go on. An aborted or timed-out failover (or 30 s
 * without an end) lets writes go on to the old master. (ioredis' own `failoverDetector` ends a client
 * for good when the switch arrives while it is reconnecting; this one only asks connected clients to
 * reconnect.)
 */
import { Redis, type RedisOptions } from 'ioredis';

export interface FailoverListener {
  /** A failover of the watched master began: hold writes back. */
  started(): void;
  /** The new master is announced (`+switch-master`): reconnect, then write again. */
  switched(): void;
  /** The failover ended without a switch (aborted, timed out). */
  abandoned(): void;
}

const STARTED = ['+try-failover', '+failover-state-select-slave'];
const SWITCHED = '+switch-master';
const ABANDONED = [
  '-failover-abort-not-elected',
  '-failover-abort-no-good-slave',
  '+failover-end-for-timeout',
];

/** Whether a Sentinel event message is about master `name` (`master <name> …`, `… @ <name> …`, `<name> …`). */
function concerns(message: string, name: string): boolean {
  const words = message.split(' ');
  const at = words.indexOf('@');
  if (at >= 0) return words[at + 1] === name;
  return words[0] === name || (words[0] === 'master' && words[1] === name);
}

export class SentinelWatch {
  readonly #clients: Redis[];

  constructor(options: RedisOptions, listener: FailoverListener) {
    const name = String(options.name);
    const sentinels = (options.sentinels ?? []) as { host?: string; port?: number }[];
    this.#clients = sentinels.map((sentinel) => {
      const client = new Redis({
        host: sentinel.host,
        port: sentinel.port,
        password: options.sentinelPassword,
        tls: options.enableTLSForSentinelMode ? options.tls : undefined,
        protocol: 2,
        connectTimeout: options.connectTimeout,
        retryStrategy: (times) => Math.min(times * 50, 1000),
        maxRetriesPerRequest: null,
      });
      client.on('error', () => {});
      client.on('message', (channel: string, message: string) => {
        if (!concerns(message, name)) return;
        if (channel === SWITCHED) listener.switched();
        else if (STARTED.includes(channel)) listener.started();
        else if (ABANDONED.includes(channel)) listener.abandoned();
      });
      client.subscribe(SWITCHED, ...STARTED, ...ABANDONED).catch(() => {});
      return client;
    });
  }

  close(): void {
    for (const client of this.#clients) client.disconnect();
  }
}
