/**
 * An upstream that records every request a proxy sends it, read strictly: the head, then a body framed
 * by `Content-Length` or decoded from `Transfer-Encoding: chunked`. A request is recorded as soon as
 * its head is read and marked `complete` once its body is whole, so a body a proxy began to stream
 * and abandoned shows as an incomplete request. Bytes a strict reader would not take (a bare LF, a
 * header line without a colon, both framings) are recorded as `malformed`: no proxy should send them.
 * Each complete request is answered `200` with a two-byte body (none after HEAD), the connection kept
 * unless the request said `Connection: close`.
 */
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

export interface RecordedRequest {
  /** Arrival order over the upstream's life (0, 1, …). */
  readonly seq: number;
  /** The upstream connection it came on (0, 1, …). */
  readonly connection: number;
  readonly method: string;
  readonly target: string;
  readonly version: string;
  /** `[name, value]` as received, values without surrounding spaces. */
  readonly headers: readonly (readonly [string, string])[];
  readonly framing: 'none' | 'length' | 'chunked';
  /** The body so far (decoded when chunked). */
  body: Buffer;
  complete: boolean;
}

export interface MalformedRequest {
  readonly seq: number;
  readonly connection: number;
  /** Why the strict reader refused it. */
  readonly why: string;
  /** The bytes from the start of the unreadable request. */
  readonly bytes: Buffer;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) (\S+) (HTTP\/1\.[01])$/;
const HEAD_END = Buffer.from('\r\n\r\n');
/** A head larger than this is recorded as malformed. */
const MAX_HEAD_BYTES = 256 * 1024;

/** The first value of header `name` (any case), or undefined. */
export function headerValue(request: RecordedRequest, name: string): string | undefined {
  const lower = name.toLowerCase();
  return request.headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}

export class RecordingUpstream {
  readonly requests: RecordedRequest[] = [];
  readonly malformed: MalformedRequest[] = [];
  /** Called on every request recorded or body byte read (for waits on quiet). */
  onActivity: () => void = () => {};
  /** A control byte (but HTAB) in a header value is recorded, not refused. */
  readonly controlBytes: boolean;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #seq = 0;
  #connections = 0;

  private constructor(controlBytes: boolean) {
    this.controlBytes = controlBytes;
    this.#server = createServer((socket) => this.#serve(socket));
  }

  static async start(options: { controlBytes?: boolean } = {}): Promise<RecordingUpstream> {
    const upstream = new RecordingUpstream(options.controlBytes ?? false);
    await new Promise<void>((resolve) => upstream.#server.listen(0, '127.0.0.1', resolve));
    return upstream;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  #serve(socket: Socket): void {
    const connection = this.#connections++;
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const reader = new RequestReader(connection, this);
    socket.on('data', (chunk: Buffer) => {
      this.onActivity();
      for (const answer of reader.push(chunk)) {
        if (answer === 'close') socket.end();
        else if (!socket.destroyed) socket.write(answer);
      }
    });
  }

  /** The next arrival number. */
  nextSeq(): number {
    return this.#seq++;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** One upstream connection's bytes, request after request. */
class RequestReader {
  readonly #connection: number;
  readonly #upstream: RecordingUpstream;
  #pending = Buffer.alloc(0);
  /** The request whose body is being read, or null between requests. */
  #current: RecordedRequest | null = null;
  #chunked: ChunkedBody | null = null;
  #remaining = 0;
  #broken = false;

  constructor(connection: number, upstream: RecordingUpstream) {
    this.#connection = connection;
    this.#upstream = upstream;
  }

  /** Reads `chunk`; returns what to write back (answers, or `close` to end the connection). */
  push(chunk: Buffer): (Buffer | 'close')[] {
    if (this.#broken) return [];
    this.#pending = Buffer.concat([this.#pending, chunk]);
    const out: (Buffer | 'close')[] = [];
    for (;;) {
      if (this.#current === null) {
        const headEnd = this.#pending.indexOf(HEAD_END);
        if (headEnd === -1) {
          if (this.#pending.length > MAX_HEAD_BYTES) this.#refuse('head too large');
          return out;
        }
        const head = this.#pending.toString('latin1', 0, headEnd);
        const why = this.#startRequest(head);
        if (why !== null) {
          this.#refuse(why);
          return out;
        }
        this.#pending = this.#pending.subarray(headEnd + 4);
      }
      const request = this.#current!;
      if (request.framing === 'length') {
        const take = Math.min(this.#remaining, this.#pending.length);
        request.body = Buffer.concat([request.body, this.#pending.subarray(0, take)]);
        this.#pending = this.#pending.subarray(take);
        this.#remaining -= take;
        if (this.#remaining > 0) return out;
      } else if (request.framing === 'chunked') {
        const result = this.#chunked!.push(this.#pending);
        request.body = Buffer.concat([request.body, ...result.data]);
        this.#pending = this.#pending.subarray(result.consumed);
        if (result.error !== null) {
          this.#refuse(`chunked body: ${result.error}`);
          return out;
        }
        if (!result.done) return out;
      }
      request.complete = true;
      this.#current = null;
      this.#upstream.onActivity();
      out.push(answer(request));
      if (/(^|,)\s*close\s*(,|$)/i.test(headerValue(request, 'connection') ?? '')) {
        out.push('close');
        this.#broken = true;
        return out;
      }
    }
  }

  /** Reads a head; null when it is a request, else why not. */
  #startRequest(head: string): string | null {
    if (/\r(?!\n)|(?<!\r)\n/.test(head)) return 'bare CR or LF in the head';
    const lines = head.split('\r\n');
    const line = REQUEST_LINE.exec(lines[0]!);
    if (line === null) return `request line ${JSON.stringify(lines[0])}`;
    const headers: [string, string][] = [];
    for (const text of lines.slice(1)) {
      const colon = text.indexOf(':');
      const name = text.slice(0, colon);
      if (colon === -1 || !TOKEN.test(name)) return `header line ${JSON.stringify(text)}`;
      const value = text.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
      if (!this.#upstream.controlBytes && /[\x00-\x08\x0a-\x1f\x7f]/.test(value))
        return `control byte in ${JSON.stringify(text)}`;
      headers.push([name, value]);
    }
    const lengths = headers.filter(([n]) => n.toLowerCase() === 'content-length').map(([, v]) => v);
    const codings = headers.filter(([n]) => n.toLowerCase() === 'transfer-encoding').map(([, v]) => v);
    if (lengths.length > 1) return 'more than one Content-Length';
    if (lengths.length === 1 && !/^[0-9]{1,15}$/.test(lengths[0]!)) return 'Content-Length not digits';
    if (lengths.length === 1 && codings.length > 0) return 'Content-Length and Transfer-Encoding';
    if (codings.length > 1 || (codings.length === 1 && codings[0]!.toLowerCase() !== 'chunked'))
      return `Transfer-Encoding ${JSON.stringify(codings.join(', '))}`;
    const framing = codings.length === 1 ? 'chunked' : lengths.length === 1 ? 'length' : 'none';
    this.#current = {
      seq: this.#upstream.nextSeq(),
      connection: this.#connection,
      method: line[1]!,
      target: line[2]!,
      version: line[3]!,
      headers,
      framing,
      body: Buffer.alloc(0),
      complete: false,
    };
    this.#remaining = framing === 'length' ? Number(lengths[0]) : 0;
    this.#chunked = framing === 'chunked' ? new ChunkedBody() : null;
    this.#upstream.requests.push(this.#current);
    return null;
  }

  #refuse(why: string): void {
    this.#broken = true;
    this.#upstream.malformed.push({
      seq: this.#upstream.nextSeq(),
      connection: this.#connection,
      why,
      bytes: this.#pending,
    });
  }
}

function answer(request: RecordedRequest): Buffer {
  const body = request.method === 'HEAD' ? '' : 'ok';
  return Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n${body}`, 'latin1');
}

/** A strict chunked decoder (RFC 9112 §7.1): hex size, optional extensions, CRLF everywhere. */
class ChunkedBody {
  #state: 'size' | 'data' | 'data-end' | 'trailers' | 'done' = 'size';
  #remaining = 0;

  push(bytes: Buffer): { data: Buffer[]; consumed: number; done: boolean; error: string | null } {
    const data: Buffer[] = [];
    let at = 0;
    const result = (error: string | null) => ({ data, consumed: at, done: this.#state === 'done', error });
    while (at < bytes.length && this.#state !== 'done') {
      if (this.#state === 'data') {
        const take = Math.min(this.#remaining, bytes.length - at);
        data.push(bytes.subarray(at, at + take));
        at += take;
        this.#remaining -= take;
        if (this.#remaining === 0) this.#state = 'data-end';
        continue;
      }
      const crlf = bytes.indexOf('\r\n', at, 'latin1');
      if (crlf === -1) return result(null);
      const line = bytes.toString('latin1', at, crlf);
      if (/[\r\n]/.test(line)) return result(`bare CR or LF in ${JSON.stringify(line)}`);
      at = crlf + 2;
      if (this.#state === 'data-end') {
        if (line !== '') return result(`data longer than its size: ${JSON.stringify(line)}`);
        this.#state = 'size';
      } else if (this.#state === 'trailers') {
        if (line === '') this.#state = 'done';
      } else {
        const size = /^([0-9A-Fa-f]{1,15})(;.*)?$/.exec(line);
        if (size === null) return result(`chunk size ${JSON.stringify(line)}`);
        this.#remaining = Number.parseInt(size[1]!, 16);
        this.#state = this.#remaining === 0 ? 'trailers' : 'data';
      }
    }
    return result(null);
  }
}
