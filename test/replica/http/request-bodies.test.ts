/**
 * Request bodies framed by Content-Length, read by the replica itself (http1-connection.ts), through
 * the exchange: one held by a delay waits (the connection stops reading when too much of it waits)
 * and then reaches the upstream whole; one nobody forwards is dropped after the answer; and in both
 * cases the next request on the same client connection is answered.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Decision } from '../../../src/replica/http/contract/decision.ts';
import { startProxy, startUpstream, type TestProxy, type TestUpstream } from './harness.ts';

const DECISIONS: Record<string, Decision> = {
  '/held': { action: 'delay', delayMs: 100 },
  '/answered': { action: 'return', code: 200, body: 'answered\n' },
  '/forwarded': { action: 'pass' },
};

/** Reads answers off one client connection as they come. */
class Client {
  readonly socket: Socket;
  #text = '';

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => {
      this.#text += d.toString('latin1');
    });
  }

  /** The next whole answer (its body framed by Content-Length). */
  async answer(): Promise<{ status: number; body: string }> {
    for (;;) {
      const headEnd = this.#text.indexOf('\r\n\r\n');
      if (headEnd !== -1) {
        const head = this.#text.slice(0, headEnd);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        const end = headEnd + 4 + length;
        if (this.#text.length >= end) {
          const body = this.#text.slice(headEnd + 4, end);
          this.#text = this.#text.slice(end);
          return { status: Number(head.slice(9, 12)), body };
        }
      }
      await once(this.socket, 'data');
    }
  }
}

describe('request bodies read by the replica, through the exchange', () => {
  let upstream: TestUpstream;
  let proxy: TestProxy<Decision>;

  before(async () => {
    upstream = await startUpstream();
    proxy = await startProxy([{ port: upstream.port }], {
      decide: (ctx) => DECISIONS[ctx.req.url ?? ''] ?? { action: 'return', code: 404 },
    });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('a body held by a delay (larger than what waits unread) reaches the upstream whole; the next request follows', async () => {
    const body = Buffer.alloc(300 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = 0x61 + (i % 26);
    const client = new Client(proxy.port);
    await once(client.socket, 'connect');
    client.socket.write(`POST /held HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`);
    client.socket.write(body);
    const first = await client.answer();
    assert.equal(first.status, 200);
    const record = upstream.requests.at(-1)!;
    assert.equal(record.url, '/held');
    assert.equal(record.body, body.toString('latin1'), 'every byte, in order');
    client.socket.write('GET /forwarded HTTP/1.1\r\nHost: a\r\n\r\n');
    const second = await client.answer();
    assert.equal(second.status, 200);
    assert.equal(upstream.requests.at(-1)!.url, '/forwarded');
    client.socket.destroy();
  });

  test('a body nobody forwards is dropped after the answer; the next request on the connection is read', async () => {
    const before = upstream.requests.length;
    const client = new Client(proxy.port);
    await once(client.socket, 'connect');
    client.socket.write(
      `POST /answered HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(1000)}`,
    );
    const first = await client.answer();
    assert.deepEqual(first, { status: 200, body: 'answered\n' });
    // the rest of the body, then a request that must not be read as part of it
    client.socket.write(`${'x'.repeat(99_000)}GET /forwarded HTTP/1.1\r\nHost: a\r\n\r\n`);
    const second = await client.answer();
    assert.equal(second.status, 200);
    assert.equal(upstream.requests.length, before + 1, 'only the GET reached the upstream');
    assert.equal(upstream.requests.at(-1)!.url, '/forwarded');
    client.socket.destroy();
  });
});
