/**
 * One request at a time over raw sockets, timed from the first byte written (or the connect, on a
 * fresh connection) to the last byte of the response: for latency comparisons between servers. A
 * client connection is either kept across requests (`reused`) or made for each one (`fresh`).
 * Responses must carry a Content-Length.
 */
import { connect, type Socket } from 'node:net';

export type ConnectionKind = 'reused' | 'fresh';

export interface TimedRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: Buffer;
}

interface Pending {
  chunks: Buffer[];
  bytes: number;
  resolve: (status: number) => void;
  reject: (err: Error) => void;
}

/** A client of one server: `time` sends a request and resolves with its duration and status. */
export class TimedClient {
  readonly #port: number;
  readonly #kind: ConnectionKind;
  readonly #host: string;
  #socket: Socket | null = null;
  #pending: Pending | null = null;

  constructor(port: number, kind: ConnectionKind, host = 'cafe.example.com') {
    this.#port = port;
    this.#kind = kind;
    this.#host = host;
  }

  async time(request: TimedRequest): Promise<{ ms: number; status: number }> {
    const startMs = performance.now();
    if (this.#socket === null || this.#kind === 'fresh') await this.#connect();
    const socket = this.#socket!;
    const status = await new Promise<number>((resolve, reject) => {
      this.#pending = { chunks: [], bytes: 0, resolve, reject };
      const length = request.body === undefined ? '' : `Content-Length: ${request.body.length}\r\n`;
      const close = this.#kind === 'fresh' ? 'Connection: close\r\n' : '';
      const head = `${request.method} ${request.path} HTTP/1.1\r\nHost: ${this.#host}\r\n${length}${close}\r\n`;
      socket.write(request.body === undefined ? head : Buffer.concat([Buffer.from(head), request.body]));
    });
    const ms = performance.now() - startMs;
    if (this.#kind === 'fresh') this.close();
    return { ms, status };
  }

  close(): void {
    this.#socket?.destroy();
    this.#socket = null;
  }

  #connect(): Promise<void> {
    this.close();
    return new Promise((resolve, reject) => {
      const socket = connect(this.#port, '127.0.0.1');
      socket.setNoDelay(true);
      socket.once('connect', () => resolve());
      socket.once('error', reject);
      socket.on('error', (err) => this.#pending?.reject(err));
      socket.on('data', (chunk: Buffer) => this.#onData(chunk));
      this.#socket = socket;
    });
  }

  #onData(chunk: Buffer): void {
    const pending = this.#pending;
    if (pending === null) return;
    pending.chunks.push(chunk);
    pending.bytes += chunk.length;
    const text = Buffer.concat(pending.chunks);
    const headEnd = text.indexOf('\r\n\r\n');
    if (headEnd === -1) return;
    const head = text.subarray(0, headEnd).toString('latin1');
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length === null) {
      pending.reject(new Error(`no Content-Length in ${JSON.stringify(head)}`));
      return;
    }
    if (pending.bytes < headEnd + 4 + Number(length[1])) return;
    this.#pending = null;
    pending.resolve(Number(head.slice(9, 12)));
  }
}

/** The q-quantile (0..1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}
