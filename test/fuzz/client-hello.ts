/**
 * Properties of the ClientHello reader (src/replica/http/client-hello.ts):
 *
 * - on arbitrary bytes (and on real hellos with bytes changed) it never throws and answers INCOMPLETE,
 *   null or a string;
 * - on real ClientHellos — captured from node:tls clients with different server names, TLS versions
 *   and ALPN lists, then cut into records of random sizes — it answers the name once the hello is
 *   whole, INCOMPLETE for every prefix before that, and the same whatever follows what it was given
 *   (it never reads past it).
 */
import assert from 'node:assert/strict';
import { type AddressInfo, createServer } from 'node:net';
import { type ConnectionOptions, connect } from 'node:tls';
import fc from 'fast-check';
import { clientHelloServerName, INCOMPLETE } from '../../src/replica/http/edge/client-hello.ts';
import type { NamedProperty } from './response-reader.ts';

/** A captured hello: the handshake message (type and length included) and the name it asks for. */
export interface Hello {
  readonly message: Buffer;
  /** The SNI name, or null when the client sent none. */
  readonly name: string | null;
}

/** The clients whose hellos are captured: names, versions, ALPN lists. */
const CLIENTS: readonly (ConnectionOptions & { readonly name: string | null })[] = [
  { name: 'a.example', servername: 'a.example' },
  { name: 'xn--bcher-kva.example', servername: 'xn--bcher-kva.example', ALPNProtocols: ['h2', 'http/1.1'] },
  {
    name: `${'l'.repeat(63)}.${'o'.repeat(63)}.${'n'.repeat(63)}.example`,
    servername: `${'l'.repeat(63)}.${'o'.repeat(63)}.${'n'.repeat(63)}.example`,
  },
  { name: 'b.example', servername: 'b.example', maxVersion: 'TLSv1.2', ALPNProtocols: ['http/1.1'] },
  { name: 'localhost', servername: 'localhost', minVersion: 'TLSv1.3' },
  // an IP address is not sent as a name: a hello without SNI
  { name: null, servername: '' },
];

/** Reads records off `bytes` until one handshake message is whole; null while it is not. */
function handshakeMessage(bytes: Buffer): Buffer | null {
  const fragments: Buffer[] = [];
  let at = 0;
  while (at + 5 <= bytes.length) {
    const length = bytes.readUInt16BE(at + 3);
    if (at + 5 + length > bytes.length) return null;
    fragments.push(bytes.subarray(at + 5, at + 5 + length));
    at += 5 + length;
    const joined = Buffer.concat(fragments);
    if (joined.length >= 4 && joined.length >= 4 + joined.readUIntBE(1, 3)) {
      return joined.subarray(0, 4 + joined.readUIntBE(1, 3));
    }
  }
  return null;
}

/** The ClientHello a node:tls client with `options` sends, read by a plain TCP server. */
function captureOne(options: ConnectionOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      let bytes = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        const message = handshakeMessage(bytes);
        if (message === null) return;
        socket.destroy();
        server.close();
        resolve(Buffer.from(message));
      });
      socket.on('error', () => {});
    });
    server.listen(0, '127.0.0.1', () => {
      const client = connect({
        ...options,
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        rejectUnauthorized: false,
      });
      client.on('error', () => {});
      client.setTimeout(5_000, () => {
        client.destroy();
        server.close();
        reject(new Error('no ClientHello within 5 s'));
      });
    });
  });
}

/** One hello per client in CLIENTS. */
export async function captureHellos(): Promise<Hello[]> {
  const hellos: Hello[] = [];
  for (const { name, ...options } of CLIENTS) hellos.push({ message: await captureOne(options), name });
  return hellos;
}

/** The hello's message cut into handshake records of the given sizes (the last one takes the rest). */
export function intoRecords(message: Buffer, sizes: readonly number[]): Buffer {
  const records: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < message.length; i++) {
    const size = Math.min(
      sizes.length === 0 ? 16_384 : sizes[i % sizes.length]!,
      message.length - at,
      16_384,
    );
    const header = Buffer.from([0x16, 0x03, i === 0 ? 0x01 : 0x03, size >> 8, size & 0xff]);
    records.push(header, message.subarray(at, at + size));
    at += size;
  }
  return Buffer.concat(records);
}

type Answer = ReturnType<typeof clientHelloServerName>;

/** Reads `bytes` from a buffer that holds exactly them (a copy), and from one with `after` behind them. */
function read(bytes: Buffer, after: Uint8Array): Answer {
  const exact = clientHelloServerName(Buffer.from(bytes));
  // the same bytes at the start of a larger buffer, given as a view of just them
  const larger = Buffer.concat([bytes, Buffer.from(after)]);
  assert.equal(clientHelloServerName(larger.subarray(0, bytes.length)), exact, 'reads only what it is given');
  return exact;
}

function checkAnswer(answer: Answer): void {
  assert.ok(answer === INCOMPLETE || answer === null || typeof answer === 'string');
}

/** The properties, over `hellos` (captureHellos). */
export function clientHelloProperties(hellos: readonly Hello[]): NamedProperty[] {
  const hello = fc.constantFrom(...hellos);
  const sizes = fc.array(fc.integer({ min: 1, max: 600 }), { minLength: 1, maxLength: 6 });
  return [
    {
      name: 'ClientHello: arbitrary bytes',
      property: fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 600 }),
          // a handshake record header first, so the bytes get past the first check
          fc.uint8Array({ maxLength: 600 }).map((b) => new Uint8Array([0x16, 0x03, 0x01, ...b])),
          fc
            .uint8Array({ maxLength: 600 })
            .map((b) => new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, ...b])),
        ),
        (bytes) => checkAnswer(read(Buffer.from(bytes), new Uint8Array([0x16, 0x03, 0x01, 0xff, 0xff]))),
      ),
    },
    {
      name: 'ClientHello: real hellos with bytes changed',
      property: fc.property(
        hello,
        sizes,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (h, recordSizes, changes) => {
          const bytes = intoRecords(h.message, recordSizes);
          for (const [at, value] of changes) bytes[at % bytes.length] = value;
          checkAnswer(read(bytes, new Uint8Array(8)));
        },
      ),
    },
    {
      name: 'ClientHello: real hellos in records of any size, cut anywhere',
      property: fc.property(
        hello,
        sizes,
        fc.nat(),
        fc.uint8Array({ maxLength: 64 }),
        (h, recordSizes, cut, after) => {
          const bytes = intoRecords(h.message, recordSizes);
          // whole: the name (null without one), whatever follows
          assert.equal(read(bytes, after), h.name);
          assert.equal(clientHelloServerName(Buffer.concat([bytes, Buffer.from(after)])), h.name);
          // any prefix: not yet, though the rest of the hello is right behind it in memory
          const prefix = bytes.subarray(0, cut % bytes.length);
          assert.equal(
            read(prefix, bytes.subarray(prefix.length)),
            INCOMPLETE,
            `prefix of ${prefix.length} of ${bytes.length} bytes`,
          );
        },
      ),
    },
  ];
}
