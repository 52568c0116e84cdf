/**
 * Client keep-alive per location against real nginx (ngx_http_update_location_config,
 * ngx_http_header_filter): `keepalive_requests` counts the connection's requests against the
 * location each one ended in; `keepalive_timeout`'s second parameter is the `Keep-Alive: timeout=`
 * sent, inherited apart from the first; `keepalive_time` closes a connection older than it after the
 * request in progress. Several requests on one connection, the same answers' keep-alive fields.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const body = (port: number): string => `
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        keepalive_requests 2;
        keepalive_timeout 30 9;
        location / { return 200 "x"; }
        location /r { keepalive_requests 4; keepalive_timeout 20s; return 200 "x"; }
        location /plain { keepalive_requests 4; keepalive_timeout 20s 0; return 200 "x"; }
        location /time { keepalive_requests 100; keepalive_time 1s; return 200 "x"; }
    }`;

/** One connection: requests one after another, each answer's keep-alive fields; '(closed)' once it is. */
class Client {
  readonly #socket: Socket;
  #data = '';
  #closed = false;
  #wake: (() => void) | null = null;

  constructor(port: number) {
    this.#socket = connect(port, '127.0.0.1');
    this.#socket.setEncoding('latin1');
    this.#socket.on('data', (chunk: string) => {
      this.#data += chunk;
      this.#wake?.();
    });
    this.#socket.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
    this.#socket.on('error', () => {});
  }

  /** `GET path`: `Connection` and `Keep-Alive` of its answer (the body is `x`). */
  async get(path: string): Promise<string> {
    if (this.#closed) return '(closed)';
    this.#socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    for (;;) {
      const end = this.#data.indexOf('\r\n\r\n');
      if (end !== -1 && this.#data.length >= end + 5) {
        const head = this.#data.slice(0, end);
        this.#data = this.#data.slice(end + 5);
        const connection = /\r\nConnection: ([^\r]*)/i.exec(head)?.[1] ?? '-';
        const keepAlive = /\r\nKeep-Alive: ([^\r]*)/i.exec(head)?.[1] ?? '-';
        return `${path} ${connection} ${keepAlive}`;
      }
      if (this.#closed) return '(closed)';
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = null;
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** The paths requested in turn on one connection of each server. */
async function both(servers: SideBySide, paths: readonly string[]): Promise<[string[], string[]]> {
  const answers: [string[], string[]] = [[], []];
  for (const [i, port] of [servers.nginxPort, servers.replicaPort].entries()) {
    const client = new Client(port);
    for (const path of paths) answers[i]!.push(await client.get(path));
    client.close();
  }
  return answers;
}

describe('client keep-alive per location: as nginx', () => {
  let servers: SideBySide;
  before(async () => {
    servers = await startSideBySide(body);
  });
  after(async () => {
    await servers?.stop();
  });

  test("keepalive_requests: the connection's count against each request's location", async () => {
    for (const paths of [
      ['/r', '/r', '/r', '/r', '/r'],
      ['/r', '/', '/r'],
      ['/', '/r', '/r', '/r'],
    ]) {
      const [nginx, replica] = await both(servers, paths);
      assert.deepEqual(replica, nginx, paths.join(' '));
      if (paths.length === 5) {
        const kept = '/r keep-alive timeout=9';
        assert.deepEqual(nginx, [kept, kept, kept, '/r close -', '(closed)']);
      }
    }
  });

  test("keepalive_timeout's header_timeout: Keep-Alive: timeout=N, inherited apart; 0 sends none", async () => {
    const [nginx, replica] = await both(servers, ['/', '/plain', '/r']);
    assert.deepEqual(nginx, ['/ keep-alive timeout=9', '/plain keep-alive -', '/r keep-alive timeout=9']);
    assert.deepEqual(replica, nginx);
  });

  test('keepalive_time: a request after it ends the connection', async () => {
    const clients = [new Client(servers.nginxPort), new Client(servers.replicaPort)];
    const first = await Promise.all(clients.map((c) => c.get('/time')));
    // nothing to wait on: the connection's age is the condition
    await delay(1_100);
    const second = await Promise.all(clients.map((c) => c.get('/time')));
    const third = await Promise.all(clients.map((c) => c.get('/time')));
    for (const c of clients) c.close();
    assert.deepEqual(first, ['/time keep-alive timeout=9', '/time keep-alive timeout=9']);
    assert.deepEqual(second, ['/time close -', '/time close -']);
    assert.deepEqual(third, ['(closed)', '(closed)']);
  });
});
