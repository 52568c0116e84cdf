/**
 * WebSocket-ish parts for the upgrade tests, with node:http only: an upstream that answers upgrade
 * requests with a 101 and then echoes every byte (and plain requests with their record as JSON), and a
 * client that sends an upgrade request and hands back the tunnel, or the response it got instead.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { UpstreamRecord } from './harness.ts';

export interface UpgradeUpstream {
  readonly port: number;
  /** Upgrade requests, in arrival order (body: what came after the head). */
  readonly upgrades: UpstreamRecord[];
  /** Plain requests whose body was read, in arrival order. */
  readonly plain: UpstreamRecord[];
  /** Resolves with the upstream side of the next tunnel once its 101 is written. */
  nextTunnel(): Promise<Socket>;
  close(): Promise<void>;
}

/**
 * `/refuse…` answers 403 instead of switching; `/stall…` never answers; `/push…` speaks first, right
 * behind its 101.
 */
export async function startUpgradeUpstream(): Promise<UpgradeUpstream> {
  const upgrades: UpstreamRecord[] = [];
  const plain: UpstreamRecord[] = [];
  const waiters: ((socket: Socket) => void)[] = [];
  // upgraded connections are the server's no more: closeAllConnections() does not see them
  const upgraded = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const record = recordOf(req, Buffer.concat(chunks));
      plain.push(record);
      const body = JSON.stringify(record);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => {});
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    upgrades.push(recordOf(req, head));
    if (req.url?.startsWith('/stall')) return;
    if (req.url?.startsWith('/refuse')) {
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 7\r\nConnection: close\r\n\r\nrefused',
      );
      return;
    }
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nServer: upstream\r\nX-Pad: avoid browser bug\r\n\r\n' +
        (req.url?.startsWith('/push') ? 'welcome' : ''),
    );
    if (head.length !== 0) socket.write(head);
    socket.on('data', (chunk: Buffer) => socket.write(chunk));
    socket.on('end', () => socket.end());
    waiters.shift()?.(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    upgrades,
    plain,
    nextTunnel: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function recordOf(req: IncomingMessage, body: Buffer): UpstreamRecord {
  return {
    method: req.method ?? '',
    url: req.url ?? '',
    headers: req.headers,
    rawHeaders: req.rawHeaders,
    body: body.toString('latin1'),
  };
}

export type UpgradeOutcome =
  | {
      readonly kind: 'upgrade';
      readonly res: IncomingMessage;
      readonly socket: Socket;
      /** Bytes that came with the 101 head. */
      readonly head: Buffer;
    }
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly headers: IncomingHttpHeaders;
      readonly body: string;
    }
  | { readonly kind: 'closed' };

/** An upgrade request (`Connection: Upgrade`, `Upgrade: websocket`) on a fresh connection. */
export function openUpgrade(
  port: number,
  path: string,
  headers: OutgoingHttpHeaders = {},
): Promise<UpgradeOutcome> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      agent: false,
      headers: { host: 'cafe.example.com', connection: 'Upgrade', upgrade: 'websocket', ...headers },
    });
    req.on('upgrade', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      socket.on('error', () => {});
      resolve({ kind: 'upgrade', res, socket, head });
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          kind: 'response',
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('latin1'),
        }),
      );
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET') resolve({ kind: 'closed' });
      else reject(err);
    });
    req.end();
  });
}

/** Narrows an outcome to a tunnel, failing the test otherwise. */
export function tunnelOf(outcome: UpgradeOutcome): Extract<UpgradeOutcome, { kind: 'upgrade' }> {
  if (outcome.kind !== 'upgrade') throw new Error(`expected a 101, got ${JSON.stringify(outcome)}`);
  return outcome;
}

/** Narrows an outcome to a response, failing the test otherwise. */
export function answerOf(outcome: UpgradeOutcome): Extract<UpgradeOutcome, { kind: 'response' }> {
  if (outcome.kind !== 'response') throw new Error(`expected a response, got ${outcome.kind}`);
  return outcome;
}

/** Resolves with the next `bytes` bytes read from `socket` (after `already`, bytes read before). */
export function readBytes(socket: Socket, bytes: number, already: Buffer = Buffer.alloc(0)): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = already;
    const check = () => {
      if (got.length < bytes) return false;
      socket.off('data', onData);
      socket.off('close', onClose);
      // what comes next waits for the next reader
      socket.pause();
      resolve(got.subarray(0, bytes).toString('latin1'));
      return true;
    };
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      check();
    };
    const onClose = () => reject(new Error(`closed after ${got.length} of ${bytes} bytes`));
    if (check()) return;
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

/** Writes `text` and resolves with as many bytes read back (the echo). */
export function echo(socket: Socket, text: string): Promise<string> {
  const back = readBytes(socket, Buffer.byteLength(text));
  socket.write(text);
  return back;
}

/** Resolves once `socket` has closed (reading, and dropping, whatever still comes). */
export function closed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  const done = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.resume();
  return done;
}

/** Everything a raw connection receives, as latin1 text, with a way to wait for some of it. */
export interface ReceivedText {
  readonly text: string;
  /** Resolves once the text so far includes `marker`. */
  until(marker: string): Promise<void>;
  /** Resolves once the connection has closed. */
  readonly closed: Promise<void>;
}

export function receivedText(socket: Socket): ReceivedText {
  let text = '';
  const waiters: { marker: string; resolve: () => void }[] = [];
  const closedNow = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.setEncoding('latin1').on('data', (chunk: string) => {
    text += chunk;
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (text.includes(waiters[i]!.marker)) waiters.splice(i, 1)[0]!.resolve();
    }
  });
  return {
    get text() {
      return text;
    },
    until: (marker) =>
      text.includes(marker) ? Promise.resolve() : new Promise((resolve) => waiters.push({ marker, resolve })),
    closed: closedNow,
  };
}
