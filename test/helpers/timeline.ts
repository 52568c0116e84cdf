/**
 * Plays a request timeline against an HTTP server on 127.0.0.1 and records what each request got.
 *
 * Connections: one fresh connection per request (or per pipelined group), opened *before* the clock
 * starts, so at the scheduled moment only the request bytes are written — no handshake on the timed
 * path, and a delayed or closed (444) request never holds up another connection. Requests marked
 * `pipelined` are written in the same `write()` as the previous one on its connection; nginx handles
 * pipelined requests one after another in the same event-loop pass, i.e. in the *same millisecond* —
 * the only way to get a deterministic same-millisecond burst from outside the server.
 *
 * The schedule is absolute (offsets from one start time), so a late timer does not push later requests
 * back, and requests are in flight concurrently.
 */
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface TimelineRequest {
  /** Offset in ms from the start of the timeline. */
  readonly at: number;
  /** Client address, sent as `X-Forwarded-For` (the server trusts it via the realip module). */
  readonly addr: string;
  /** Request target, with the query string if any. */
  readonly uri: string;
  /** `Host` header; default `localhost`. */
  readonly host?: string;
  /** Default `GET`. */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Send on the previous request's connection in the same write (same `at` required). */
  readonly pipelined?: boolean;
}

export interface Observation {
  /** HTTP status, or `closed` when the connection closed without a response (444). */
  readonly code: number | 'closed';
  /** The `X-Limit-Req-Status` response header; `null` when absent. */
  readonly limitReqStatus: string | null;
  /** From writing the request to the first byte of its response (ms). */
  readonly elapsedMs: number;
  readonly bodyBytes: number;
}

/** The header that ties a request to its access-log line. */
export const SEQ_HEADER = 'X-Timeline-Seq';

interface Pending {
  readonly index: number;
  readonly request: TimelineRequest;
}

/** Renders request `index` as HTTP/1.1 bytes; the last of a connection asks the server to close. */
export function renderRequest(request: TimelineRequest, index: number, last: boolean): string {
  const lines = [
    `${request.method ?? 'GET'} ${request.uri} HTTP/1.1`,
    `Host: ${request.host ?? 'localhost'}`,
    `X-Forwarded-For: ${request.addr}`,
    `${SEQ_HEADER}: ${index}`,
  ];
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`);
  if (last) lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Groups requests into connections; a pipelined request joins the previous one's connection. */
export function groupConnections(requests: readonly TimelineRequest[]): Pending[][] {
  const groups: Pending[][] = [];
  requests.forEach((request, index) => {
    const previous = groups.at(-1);
    if (request.pipelined) {
      const head = previous?.[0];
      if (!previous || !head) throw new Error(`request #${index} is pipelined but has no predecessor`);
      if (head.request.at !== request.at) {
        throw new Error(`request #${index} is pipelined but at ${request.at} ms, not ${head.request.at} ms`);
      }
      previous.push({ index, request });
    } else {
      if (previous?.[0] && previous[0].request.at > request.at) {
        throw new Error(`request #${index} at ${request.at} ms is scheduled before its predecessor`);
      }
      groups.push([{ index, request }]);
    }
  });
  return groups;
}

/** Runs the timeline; resolves with one observation per request, in timeline order. */
export async function runTimeline(
  port: number,
  requests: readonly TimelineRequest[],
  options: { readonly leadMs?: number; readonly graceMs?: number } = {},
): Promise<Observation[]> {
  const groups = groupConnections(requests);
  const sockets = await Promise.all(groups.map(() => openSocket(port)));
  const results: (Observation | undefined)[] = new Array(requests.length);
  const lastAt = requests.reduce((max, r) => Math.max(max, r.at), 0);
  const startMs = performance.now() + (options.leadMs ?? 30);
  const deadlineMs = startMs + lastAt + (options.graceMs ?? 15_000);

  await Promise.all(
    groups.map((group, g) => {
      const socket = sockets[g]!;
      return playConnection(socket, group, startMs, deadlineMs, results);
    }),
  );
  return results.map((r, i) => {
    if (!r) throw new Error(`request #${i} has no observation`);
    return r;
  });
}

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

function playConnection(
  socket: Socket,
  group: readonly Pending[],
  startMs: number,
  deadlineMs: number,
  results: (Observation | undefined)[],
): Promise<void> {
  const bytes = group.map((p, i) => renderRequest(p.request, p.index, i === group.length - 1)).join('');
  const parser = new ResponseParser();
  let sentAt = 0;
  let next = 0;
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(sendTimer);
      clearTimeout(deadlineTimer);
      for (; next < group.length; next++) {
        results[group[next]!.index] = { code: 'closed', limitReqStatus: null, elapsedMs: 0, bodyBytes: 0 };
      }
      resolve();
    };
    const sendTimer = setTimeout(
      () => {
        sentAt = performance.now();
        socket.write(bytes);
      },
      Math.max(0, startMs + group[0]!.request.at - performance.now()),
    );
    const deadlineTimer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response for request #${group[next]?.index} before the deadline`));
    }, deadlineMs - performance.now());
    socket.on('data', (chunk: Buffer) => {
      const now = performance.now();
      for (const response of parser.push(chunk, now)) {
        const pending = group[next++];
        if (!pending) continue;
        results[pending.index] = {
          code: response.code,
          limitReqStatus: response.headers.get('x-limit-req-status') ?? null,
          elapsedMs: response.firstByteAt - sentAt,
          bodyBytes: response.bodyBytes,
        };
      }
    });
    socket.once('error', finish);
    socket.once('close', () => {
      const last = parser.finish(performance.now());
      const pending = last ? group[next++] : undefined;
      if (last && pending) {
        results[pending.index] = {
          code: last.code,
          limitReqStatus: last.headers.get('x-limit-req-status') ?? null,
          elapsedMs: last.firstByteAt - sentAt,
          bodyBytes: last.bodyBytes,
        };
      }
      finish();
    });
  });
}

interface ParsedResponse {
  readonly code: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly bodyBytes: number;
  readonly firstByteAt: number;
}

/** An HTTP/1.1 response stream parser for what nginx sends here: Content-Length or read-until-close. */
class ResponseParser {
  private buffer = Buffer.alloc(0);
  private head: { code: number; headers: Map<string, string>; length: number | null } | null = null;
  private firstByteAt = 0;

  push(chunk: Buffer, now: number): ParsedResponse[] {
    if (this.buffer.length === 0 && this.head === null) this.firstByteAt = now;
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const done: ParsedResponse[] = [];
    for (;;) {
      if (this.head === null) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end < 0) break;
        this.head = parseHead(this.buffer.subarray(0, end).toString('latin1'));
        this.buffer = this.buffer.subarray(end + 4);
      }
      const { length } = this.head;
      if (length === null || this.buffer.length < length) break;
      done.push({ ...this.head, bodyBytes: length, firstByteAt: this.firstByteAt });
      this.buffer = this.buffer.subarray(length);
      this.head = null;
      this.firstByteAt = now;
    }
    return done;
  }

  /** At close: a response without Content-Length ends here; nothing at all means "closed". */
  finish(now: number): ParsedResponse | null {
    if (this.head === null) return null;
    const response = { ...this.head, bodyBytes: this.buffer.length, firstByteAt: this.firstByteAt || now };
    this.head = null;
    return response;
  }
}

function parseHead(text: string): { code: number; headers: Map<string, string>; length: number | null } {
  const [statusLine = '', ...lines] = text.split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP response: ${JSON.stringify(statusLine)}`);
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (headers.has('transfer-encoding')) throw new Error('chunked responses are not expected from the oracle');
  const length = headers.get('content-length');
  return { code: Number(match[1]), headers, length: length === undefined ? null : Number(length) };
}

/** One line of the oracle's access log (`log_format conformance`). */
export interface AccessRecord {
  readonly seq: number;
  /** When nginx created the request (wall clock, ms). */
  readonly startMs: number;
  readonly requestTimeMs: number;
  readonly status: number;
  /** `$limit_req_status`; `-` when unset. */
  readonly limitReqStatus: string;
}

/** Parses the access log written by the oracle config; lines without a sequence number are skipped. */
export function parseAccessLog(text: string): Map<number, AccessRecord> {
  const records = new Map<number, AccessRecord>();
  for (const line of text.split('\n')) {
    const match = /^(\d+) (\d+)\.(\d{3}) (\d+)\.(\d{3}) (\d{3}) "([^"]*)"$/.exec(line);
    if (!match) continue;
    const [, seq, sec, msec, rtSec, rtMsec, status, lrs] = match;
    const endMs = Number(sec) * 1000 + Number(msec);
    const requestTimeMs = Number(rtSec) * 1000 + Number(rtMsec);
    records.set(Number(seq), {
      seq: Number(seq),
      startMs: endMs - requestTimeMs,
      requestTimeMs,
      status: Number(status),
      limitReqStatus: lrs ?? '-',
    });
  }
  return records;
}
