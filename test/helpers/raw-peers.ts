/**
 * The two raw peers hostile-input tests need: a client that writes exact bytes and reads what comes
 * back, and an upstream that records the requests it is sent and answers each with exact bytes.
 */
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

export interface RawAnswer {
  /** Everything the server sent, as latin1. */
  readonly text: string;
  /** How the exchange ended: the server closed, `until` held, or the client gave up after `timeoutMs`. */
  readonly ended: 'closed' | 'until' | 'timeout';
  /** ms from the first write to the end. */
  readonly ms: number;
}

export interface RawOptions {
  /** Resolves early once the text received so far satisfies it (the connection is then closed). */
  readonly until?: (text: string) => boolean;
  /** Gives up after this long (the connection is closed); default 10 s. */
  readonly timeoutMs?: number;
  /** Ends the client's side after the last part (a client that sent all it will send). */
  readonly end?: boolean;
}

/** Writes `parts` in order (each flushed before the next) on a fresh connection and reads the answer. */
export function rawExchange(
  port: number,
  parts: readonly (string | Buffer)[],
  options: RawOptions = {},
): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const startedMs = performance.now();
    let done = false;
    const finish = (ended: RawAnswer['ended']): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), ended, ms: performance.now() - startedMs });
    };
    const timer = setTimeout(() => finish('timeout'), options.timeoutMs ?? 10_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.until?.(Buffer.concat(chunks).toString('latin1'))) finish('until');
    });
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.once('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        await new Promise<void>((written) => socket.write(part, () => written()));
      }
      if (options.end === true && !socket.destroyed) socket.end();
    });
  });
}

/** The number of complete responses (status line to the end of a Content-Length body) in `text`. */
export function responseCount(text: string): number {
  let count = 0;
  let at = 0;
  for (;;) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) return count;
    const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(at, headEnd))?.[1];
    const end = headEnd + 4 + Number(length ?? 0);
    if (text.length < end) return count;
    count++;
    at = end;
  }
}

/** What a scripted upstream answers a request with (its head and body as received); null: nothing. */
export type UpstreamScript = (request: string) => string | Buffer | null;

/**
 * An upstream speaking raw HTTP/1.1: each request (head, and a body by `Content-Length`) is recorded
 * in `received` and answered by the script; the connection stays open for the next one.
 */
export class ScriptedUpstream {
  readonly received: string[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  script: UpstreamScript;

  private constructor(script: UpstreamScript) {
    this.script = script;
    this.#server = createServer((socket) => this.#serve(socket));
  }

  static async start(script: UpstreamScript): Promise<ScriptedUpstream> {
    const upstream = new ScriptedUpstream(script);
    await new Promise<void>((resolve) => upstream.#server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** Connections open now. */
  get connections(): number {
    return this.#sockets.size;
  }

  #serve(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd === -1) return;
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(pending.slice(0, headEnd))?.[1] ?? 0);
        const end = headEnd + 4 + length;
        if (pending.length < end) return;
        const request = pending.slice(0, end);
        pending = pending.slice(end);
        this.received.push(request);
        const answer = this.script(request);
        if (answer !== null)
          socket.write(typeof answer === 'string' ? Buffer.from(answer, 'latin1') : answer);
      }
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
