/**
 * An upstream that holds requests open until the test lets them go: a request whose query has
 * `hold` waits for `release(path)` (`arrived(path)` resolves once it is there); any other is answered
 * at once. The answer is the request's `X-Limit-Conn-Status` header (what the proxy set), if any.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export class GatedUpstream {
  readonly server: Server;
  readonly #held = new Map<string, { res: ServerResponse; answer: string }>();
  readonly #waiting = new Map<string, () => void>();
  /** Every path that reached the upstream, in arrival order. */
  readonly seen: string[] = [];

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '';
      this.seen.push(path);
      const answer = String(req.headers['x-limit-conn-status'] ?? '');
      if (!path.includes('hold')) {
        res.end(answer);
        return;
      }
      this.#held.set(path, { res, answer });
      this.#waiting.get(path)?.();
    });
  }

  static async start(): Promise<GatedUpstream> {
    const gate = new GatedUpstream();
    await new Promise<void>((resolve) => gate.server.listen(0, '127.0.0.1', resolve));
    return gate;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Resolves once a request for `path` is held here; rejects if none comes within `timeoutMs`. */
  arrived(path: string, timeoutMs = 10_000): Promise<void> {
    if (this.#held.has(path)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no request reached the upstream at ${path}`)),
        timeoutMs,
      );
      this.#waiting.set(path, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Sends the request for `path` (`send`) and resolves once it is held here, with its answer still to
   * come (in an object, so awaiting this does not await the answer).
   */
  async hold<T>(path: string, send: (path: string) => Promise<T>): Promise<{ answer: Promise<T> }> {
    const answer = send(path);
    await this.arrived(path);
    return { answer };
  }

  release(path: string): void {
    const held = this.#held.get(path);
    if (held === undefined) throw new Error(`nothing held at ${path}`);
    this.#held.delete(path);
    this.#waiting.delete(path);
    held.res.end(held.answer);
  }

  /** Lets every held request go. */
  releaseAll(): void {
    for (const path of [...this.#held.keys()]) this.release(path);
  }

  close(): void {
    this.releaseAll();
    this.server.close();
  }
}
