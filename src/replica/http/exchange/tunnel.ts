/**
 * An upgraded connection (WebSocket): after the 101, the client's and the upstream's connections are
 * spliced and bytes flow both ways, with backpressure, until either side ends or fails; then both are
 * closed, what was already read being delivered first — as nginx's ngx_http_upstream_process_upgraded.
 *
 * `proxy_read_timeout` bounds silence: no byte either way for that long closes the tunnel (nginx
 * re-arms that timer on traffic in both directions, so a client's pings keep a tunnel open too).
 */
import type { Socket } from 'node:net';

export class Tunnel {
  readonly client: Socket;
  readonly upstream: Socket;
  #open = true;
  readonly #onClosed: (tunnel: Tunnel) => void;

  constructor(client: Socket, upstream: Socket, onClosed: (tunnel: Tunnel) => void) {
    this.client = client;
    this.upstream = upstream;
    this.#onClosed = onClosed;
  }

  /**
   * Sends the 101 head (and what the upstream sent after it) to the client, what the client sent
   * early to the upstream, then splices the two connections.
   */
  start(responseHead: string, upstreamHead: Buffer, clientHead: Buffer, idleTimeoutMs: number): void {
    const { client, upstream } = this;
    client.write(responseHead, 'latin1');
    if (upstreamHead.length !== 0) client.write(upstreamHead);
    if (clientHead.length !== 0) upstream.write(clientHead);
    upstream.setTimeout(idleTimeoutMs);
    upstream.on('timeout', () => this.destroy());
    for (const socket of [client, upstream]) {
      socket.on('end', () => this.close());
      socket.on('error', () => this.destroy());
      // a side gone without an end (reset): cut the other; after an end, the other finishes its writes
      socket.on('close', () => {
        if (this.#open) this.destroy();
      });
    }
    client.pipe(upstream, { end: false });
    upstream.pipe(client, { end: false });
  }

  get open(): boolean {
    return this.#open;
  }

  /** Ends both connections once what they hold is written (a side ended, or the listener closes). */
  close(): void {
    if (!this.#closed()) return;
    this.client.destroySoon();
    this.upstream.destroySoon();
  }

  /** Cuts both connections at once (a failure, the idle timeout, or a forced close). */
  destroy(): void {
    this.#closed();
    this.client.destroy();
    this.upstream.destroy();
  }

  /** Marks the tunnel closed; true the first time. */
  #closed(): boolean {
    if (!this.#open) return false;
    this.#open = false;
    this.client.unpipe(this.upstream);
    this.upstream.unpipe(this.client);
    this.#onClosed(this);
    return true;
  }
}
