/**
 * No request holds the event loop on a regex: a replica process whose configuration has patterns a
 * backtracking engine takes seconds on (`^(\w+\s?)+$` against 31 characters: 5.6 s; `\d+\d+x` against
 * 8000 digits: two minutes) answers the request that carries such an input within 50 ms, and answers
 * an ordinary request sent at the same moment on another connection within 50 ms too. Each request
 * is timed from its write to the last byte of its answer, over a connection opened (and used once)
 * beforehand; a request unanswered after 5 s fails the test rather than wait for the regex to end.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, type TestContext, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';

const BOUND_MS = 50;
const GIVE_UP_MS = 5000;

/** One kept client connection: `send` writes a request head and resolves with the answer and its time. */
class KeptConnection {
  readonly #socket: Socket;
  #received = '';
  #waiter: ((text: string) => void) | null = null;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      this.#received += chunk;
      const whole = completeAnswer(this.#received);
      if (whole !== null && this.#waiter !== null) {
        this.#received = this.#received.slice(whole.length);
        const waiter = this.#waiter;
        this.#waiter = null;
        waiter(whole);
      }
    });
  }

  static open(port: number): Promise<KeptConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('error', reject);
      socket.once('connect', () => resolve(new KeptConnection(socket)));
    });
  }

  send(head: string): Promise<{ ms: number; body: string }> {
    const startMs = performance.now();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`no answer within ${GIVE_UP_MS} ms`));
      }, GIVE_UP_MS);
      this.#waiter = (text) => {
        clearTimeout(timer);
        resolve({ ms: performance.now() - startMs, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      };
      this.#socket.write(head, 'latin1');
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** The first whole answer (head and Content-Length body) at the start of `text`, or null. */
function completeAnswer(text: string): string | null {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end));
  assert.ok(length, `an answer without Content-Length: ${text.slice(0, end)}`);
  const total = end + 4 + Number(length[1]);
  return text.length >= total ? text.slice(0, total) : null;
}

const get = (path: string, headers: Record<string, string> = {}): string =>
  `GET ${path} HTTP/1.1\r\nHost: regex.test\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

describe('replica: regex time is bounded', () => {
  const dir = new TempDir();
  let replica: ReplicaRun;
  let hostile: KeptConnection;
  let ordinary: KeptConnection;

  before(async () => {
    const listen = await freePort();
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    map $http_user_agent $bad {
        "~^(\\w+\\s?)+$" 1;
        default 0;
    }
    server {
        listen 127.0.0.1:${listen};
        location ~ "\\d+\\d+x" { return 200 "digits\\n"; }
        location / { return 200 "bad=$bad\\n"; }
    }
}
`,
    );
    replica = await startReplica(config);
    const port = replica.ports[String(listen)]!;
    hostile = await KeptConnection.open(port);
    ordinary = await KeptConnection.open(port);
    // each connection answered once, and each regex run once on an ordinary input
    assert.equal((await hostile.send(get('/12x', { 'User-Agent': 'curl' }))).body, 'digits\n');
    assert.equal((await ordinary.send(get('/', { 'User-Agent': 'curl 8' }))).body, 'bad=1\n');
  });

  after(async () => {
    hostile?.close();
    ordinary?.close();
    await stopAll();
    dir.remove();
  });

  /** Sends both requests in one write each, in the same tick, and times each answer. */
  async function together(t: TestContext, hostileHead: string, expected: string): Promise<void> {
    const [slow, plain] = await Promise.all([
      hostile.send(hostileHead),
      ordinary.send(get('/', { 'User-Agent': 'Mozilla/5.0' })),
    ]);
    t.diagnostic(`hostile ${slow.ms.toFixed(2)} ms, ordinary ${plain.ms.toFixed(2)} ms`);
    assert.equal(slow.body, expected);
    assert.equal(plain.body, 'bad=0\n');
    assert.ok(slow.ms <= BOUND_MS, `the hostile request was answered in ${slow.ms.toFixed(1)} ms`);
    assert.ok(plain.ms <= BOUND_MS, `the ordinary request was answered in ${plain.ms.toFixed(1)} ms`);
  }

  test('a map regex on a User-Agent of 30 word characters and a "!" (exponential backtracking)', (t) =>
    together(t, get('/', { 'User-Agent': `${'a'.repeat(30)}!` }), 'bad=0\n'));

  test('a location regex on a URI of 8000 digits (polynomial backtracking)', (t) =>
    together(t, get(`/${'1'.repeat(8000)}`), 'bad=0\n'));
});
