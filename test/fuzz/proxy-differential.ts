/**
 * The same client bytes sent to real nginx and to a replica process on the same configuration, each
 * proxying to an upstream of its own that records what it is sent (recording-upstream.ts), and the
 * two records compared.
 *
 * The property is the security one: whatever the replica forwards, nginx forwards too, the same way —
 * every request the replica's upstream receives whole has one at nginx's with the same method, target,
 * Host and body bytes, in the same order on that client connection. The replica may forward less
 * (it refuses with 400 some heads nginx reads: bare LF, absolute-form targets, HTTP/1.2+, unknown
 * methods, controls node:http refuses); those are not failures, only tallied by kind.
 *
 * What both proxies change legitimately is left out of the comparison: nginx speaks HTTP/1.0 upstream
 * with `Connection: close` and a body's length (it reads a chunked body whole first), the replica keeps
 * the connection and may stream a body chunked; header names' case, hop-by-hop and X-Forwarded-*
 * headers differ. Host is compared as sent upstream (both are told `proxy_set_header Host $http_host`);
 * a request without one goes from nginx without Host, from the replica with the upstream's address.
 *
 * Each slot is a pair of listening ports (one per proxy) with its own pair of upstreams, so slots can
 * run cases side by side; one slot runs one case at a time, and a case ends when both connections
 * closed or went quiet (no byte to the client, none to the upstream) for `quietMs`.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { freePorts, type ReplicaRun, startReplica, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import {
  headerValue,
  type MalformedRequest,
  type RecordedRequest,
  RecordingUpstream,
} from '../helpers/recording-upstream.ts';
import { type GeneratedCase, requestCase, SMUGGLED, showBytes, writesOf } from './request-shapes.ts';

/** What one proxy did with a case's bytes. */
export interface SideResult {
  /** Requests its upstream received whole, in order. */
  readonly forwarded: readonly RecordedRequest[];
  /** Requests whose head reached the upstream but whose body did not end. */
  readonly partial: readonly RecordedRequest[];
  /** Bytes a strict reader refused. */
  readonly malformed: readonly MalformedRequest[];
  /**
   * Requests of earlier cases left partial that got more bytes during this one: what was sent next on
   * their upstream connection went into their bodies (a desync on that connection).
   */
  readonly late: readonly RecordedRequest[];
  /** The status codes of the responses the client read, in order. */
  readonly statuses: readonly number[];
  /** What the client read, as latin1. */
  readonly answer: string;
  readonly upstreamPort: number;
}

export interface Exchange {
  readonly nginx: SideResult;
  readonly replica: SideResult;
}

/** A request as compared: what a proxy may not change. */
export interface Forwarded {
  readonly method: string;
  readonly target: string;
  readonly host: string;
  readonly body: string;
}

/** The verdict on one case. */
export interface Verdict {
  readonly ok: boolean;
  /** What happened, in a few words (tallied). */
  readonly kind: string;
  /** For a failure: what each side forwarded. */
  readonly detail: string;
}

export class Slot {
  readonly nginxPort: number;
  readonly replicaPort: number;
  readonly nginxUpstream: RecordingUpstream;
  readonly replicaUpstream: RecordingUpstream;

  constructor(
    nginxPort: number,
    replicaPort: number,
    nginxUp: RecordingUpstream,
    replicaUp: RecordingUpstream,
  ) {
    this.nginxPort = nginxPort;
    this.replicaPort = replicaPort;
    this.nginxUpstream = nginxUp;
    this.replicaUpstream = replicaUp;
  }

  /** Sends `writes` to both proxies at once, each on a fresh connection, and reads what came of it. */
  async exchange(writes: readonly Buffer[], quietMs: number): Promise<Exchange> {
    const [nginx, replica] = await Promise.all([
      side(this.nginxPort, this.nginxUpstream, writes, quietMs),
      side(this.replicaPort, this.replicaUpstream, writes, quietMs),
    ]);
    return { nginx, replica };
  }
}

/** The pause between a case's writes. */
const WRITE_GAP_MS = 5;

/** One proxy's connection: write, read until closed or quiet, then what its upstream got meanwhile. */
async function side(
  port: number,
  upstream: RecordingUpstream,
  writes: readonly Buffer[],
  quietMs: number,
): Promise<SideResult> {
  const firstRequest = upstream.requests.length;
  const firstMalformed = upstream.malformed.length;
  const answer = await new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      upstream.onActivity = () => {};
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const active = () => {
      clearTimeout(timer);
      if (!done) timer = setTimeout(finish, quietMs);
    };
    upstream.onActivity = active;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      active();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.once('connect', async () => {
      active();
      for (const [i, bytes] of writes.entries()) {
        // a pause between writes, so that each is a read of its own
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, WRITE_GAP_MS));
        if (done) return;
        socket.write(bytes);
        active();
      }
    });
  });
  // what the proxy sent before the client went away may still be on its way to the upstream
  await quiet(upstream, Math.min(quietMs, 50));
  const requests = upstream.requests.slice(firstRequest);
  const partial = requests.filter((r) => !r.complete);
  return {
    forwarded: requests.filter((r) => r.complete),
    partial,
    malformed: upstream.malformed.slice(firstMalformed),
    late: lateBytes(upstream, partial),
    statuses: [...answer.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1])),
    answer,
    upstreamPort: upstream.port,
  };
}

/** Each upstream's partial requests of earlier cases, with their body's length when their case ended. */
const leftPartial = new WeakMap<RecordingUpstream, Map<RecordedRequest, number>>();

/** The partial requests of earlier cases that changed since; `partial` (this case's) are kept for later. */
function lateBytes(upstream: RecordingUpstream, partial: readonly RecordedRequest[]): RecordedRequest[] {
  const left = leftPartial.get(upstream) ?? new Map<RecordedRequest, number>();
  leftPartial.set(upstream, left);
  const late: RecordedRequest[] = [];
  for (const [request, length] of left) {
    if (request.complete || request.body.length !== length) {
      late.push(request);
      left.delete(request);
    }
  }
  for (const request of partial) left.set(request, request.body.length);
  return late;
}

/** Resolves once the upstream has been quiet for `ms`. */
function quiet(upstream: RecordingUpstream, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let timer = setTimeout(done, ms);
    function done() {
      upstream.onActivity = () => {};
      resolve();
    }
    upstream.onActivity = () => {
      clearTimeout(timer);
      timer = setTimeout(done, ms);
    };
  });
}

/** The configuration both proxies run: per slot, a server on its own port in front of its upstream. */
function configBody(listen: readonly number[], upstreams: readonly number[]): string {
  return listen
    .map(
      (port, i) => `
    server {
        listen 127.0.0.1:${port};
        server_name example.com;
        location / {
            proxy_set_header Host $http_host;
            proxy_pass http://127.0.0.1:${upstreams[i]};
        }
    }`,
    )
    .join('\n');
}

/** One nginx and one replica process, `slots` pairs of ports on each. */
export class ProxyDifferential {
  readonly slots: readonly Slot[];
  readonly #nginx: RunningNginx;
  readonly #replica: ReplicaRun;
  readonly #dir: TempDir;
  readonly #upstreams: readonly RecordingUpstream[];

  private constructor(
    slots: readonly Slot[],
    nginx: RunningNginx,
    replica: ReplicaRun,
    dir: TempDir,
    upstreams: readonly RecordingUpstream[],
  ) {
    this.slots = slots;
    this.#nginx = nginx;
    this.#replica = replica;
    this.#dir = dir;
    this.#upstreams = upstreams;
  }

  static async start(slotCount = 1): Promise<ProxyDifferential> {
    // nginx passes control bytes in header values on; the replica must not
    const nginxUps = await Promise.all(
      Array.from({ length: slotCount }, () => RecordingUpstream.start({ controlBytes: true })),
    );
    const replicaUps = await Promise.all(Array.from({ length: slotCount }, () => RecordingUpstream.start()));
    const upstreams = [...nginxUps, ...replicaUps];
    // nginx is started on a port it picked (and waits for), the other slots' ports picked here
    const morePorts = await freePorts(slotCount);
    let nginxPorts: number[] = [];
    const nginx = await startNginx({
      headerBuffers: 'nginx',
      http: (port) => {
        nginxPorts = [port, ...morePorts.filter((p) => p !== port)].slice(0, slotCount);
        return configBody(
          nginxPorts,
          nginxUps.map((u) => u.port),
        );
      },
    });
    const dir = new TempDir();
    const replicaPorts = await freePorts(slotCount);
    const file = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n${configBody(
        replicaPorts,
        replicaUps.map((u) => u.port),
      )}\n}\n`,
    );
    const replica = await startReplica(file, [], { status: false });
    const slots = nginxPorts.map(
      (port, i) => new Slot(port, replica.ports[String(replicaPorts[i])]!, nginxUps[i]!, replicaUps[i]!),
    );
    return new ProxyDifferential(slots, nginx, replica, dir, upstreams);
  }

  async stop(): Promise<void> {
    await Promise.all([this.#nginx.stop(), this.#replica.process.stop(5_000)]);
    await Promise.all(this.#upstreams.map((u) => u.close()));
    this.#dir.remove();
  }
}

/** A forwarded request as compared; a Host that is the upstream's own address counts as none. */
export function forwarded(request: RecordedRequest, upstreamPort: number): Forwarded {
  const host = headerValue(request, 'host') ?? '';
  return {
    method: request.method,
    target: request.target,
    host: host === `127.0.0.1:${upstreamPort}` ? '' : host,
    body: request.body.toString('latin1'),
  };
}

function same(a: Forwarded, b: Forwarded): boolean {
  return a.method === b.method && a.target === b.target && a.host === b.host && a.body === b.body;
}

function show(list: readonly Forwarded[]): string {
  if (list.length === 0) return '    (nothing)';
  return list
    .map(
      (f) =>
        `    ${f.method} ${JSON.stringify(f.target)} host=${JSON.stringify(f.host)} body=${showBytes(Buffer.from(f.body, 'latin1'))}`,
    )
    .join('\n');
}

/**
 * The shapes a refusal is put down to, most telling first: those docs/replica-http.md lists ("Where
 * the replica differs from nginx": node:http refuses what nginx reads), then the others node:http
 * refuses where nginx reads on or skips the line. A disagreement is named after the first of them
 * the requests up to the one not forwarded hold.
 */
const REFUSED_SHAPES = [
  'bare LF',
  'bare CR',
  'CR CR LF',
  'bare LF in the last chunk',
  'bare LF in a chunked body',
  'bare CR in a value',
  'absolute-form target',
  'HTTP/1.2 or later',
  'unknown method',
  'rare method',
  'lower-case method',
  'NUL in a value',
  'control byte in a value',
  'control byte in target',
  'obs-text in target',
  'obs-fold',
  'leading whitespace (obs-fold)',
  'no colon',
  'bad name',
  'space before the colon',
  'empty name',
  'odd chunk extension',
  'chunk size with trailing whitespace',
  'chunked body cut short',
  'trailer',
];

/** Judges one exchange of `c`'s bytes. */
export function judge(c: GeneratedCase, exchange: Exchange): Verdict {
  const { nginx, replica } = exchange;
  const fromNginx = nginx.forwarded.map((r) => forwarded(r, nginx.upstreamPort));
  const fromReplica = replica.forwarded.map((r) => forwarded(r, replica.upstreamPort));
  const detail = () =>
    `bytes: ${showBytes(c.bytes)}${c.cuts.length > 0 ? ` (written cut at ${c.cuts.join(', ')})` : ''}\n  nginx forwarded (answered ${nginx.statuses.join(', ') || 'nothing'}):\n${show(fromNginx)}\n  replica forwarded (answered ${replica.statuses.join(', ') || 'nothing'}):\n${show(fromReplica)}`;
  if (replica.malformed.length > 0) {
    const bad = replica.malformed[0]!;
    return {
      ok: false,
      kind: 'replica sent its upstream bytes a strict reader refuses',
      detail: `${bad.why}: ${showBytes(bad.bytes)}\n${detail()}`,
    };
  }
  if (replica.late.length > 0) {
    const request = replica.late[0]!;
    return {
      ok: false,
      kind: 'replica sent more on an upstream connection after a request it left unfinished',
      detail: `${request.method} ${request.target} of an earlier case got ${showBytes(request.body)} as its body\n${detail()}`,
    };
  }
  // the replica's requests must be an ordered sub-list of nginx's
  let at = 0;
  let skipped = -1;
  for (const request of fromReplica) {
    while (at < fromNginx.length && !same(fromNginx[at]!, request)) {
      if (skipped === -1) skipped = at;
      at++;
    }
    if (at === fromNginx.length) {
      return {
        ok: false,
        kind: 'replica forwarded what nginx did not (or not in its order)',
        detail: detail(),
      };
    }
    at++;
  }
  const notes: string[] = [];
  if (nginx.malformed.length > 0) notes.push(`nginx sent its upstream ${nginx.malformed[0]!.why}`);
  if (replica.partial.length > 0) notes.push('replica streamed a body it did not finish');
  const missing = skipped !== -1 ? skipped : fromReplica.length < fromNginx.length ? fromReplica.length : -1;
  if (missing !== -1) {
    const then = skipped !== -1 ? ', then forwarded a later one' : '';
    notes.push(`replica ${answered(replica.statuses)}${then} where nginx forwarded: ${reason(c, missing)}`);
  }
  if (notes.length > 0) return { ok: true, kind: notes.join('; '), detail: detail() };
  if (fromNginx.length === 0) return { ok: true, kind: 'agree: neither forwarded', detail: '' };
  return { ok: true, kind: 'agree: both forwarded the same', detail: '' };
}

function answered(statuses: readonly number[]): string {
  const refusal = statuses.find((s) => s >= 400);
  return refusal === undefined ? 'did not forward' : `answered ${refusal}`;
}

/**
 * Why the replica did not forward the `index`th request nginx forwarded: the shapes of the requests
 * up to it (a request's framing decides where the next one starts).
 */
function reason(c: GeneratedCase, index: number): string {
  const tags = [...new Set(c.requests.slice(0, index + 1).flatMap((r) => r.tags))];
  const known = REFUSED_SHAPES.find((tag) => tags.includes(tag));
  if (known !== undefined) return known;
  return tags.length === 0 ? '(no odd shape)' : `other (${tags.join(', ')})`;
}

/** Counts of verdict kinds, printed as a table. */
export class Tally {
  readonly counts = new Map<string, number>();
  /** One example's bytes per kind not an agreement. */
  readonly examples = new Map<string, string>();

  add(verdict: Verdict): void {
    this.counts.set(verdict.kind, (this.counts.get(verdict.kind) ?? 0) + 1);
    if (!verdict.kind.startsWith('agree') && !this.examples.has(verdict.kind))
      this.examples.set(verdict.kind, verdict.detail);
  }

  /** `count  kind` lines, most frequent first. */
  lines(): string[] {
    return [...this.counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([kind, count]) => `${String(count).padStart(6)}  ${kind}`);
  }
}

/** How long a connection may be quiet before its case is over; a failure is tried again with the second. */
const QUIET_MS = 150;
const CONFIRM_QUIET_MS = 1_000;

/**
 * The property over one slot: every generated case (and the `FOUND` ones) judged, tallied in `tally`.
 * A failing case is sent again with a longer quiet wait before it counts (a proxy slow to forward on
 * a loaded machine is not one that forwards differently).
 */
export function differentialProperty(slot: Slot, tally: Tally) {
  return fc.asyncProperty(requestCase, async (c) => {
    let verdict = judge(c, await slot.exchange(writesOf(c), QUIET_MS));
    if (!verdict.ok) verdict = judge(c, await slot.exchange(writesOf(c), CONFIRM_QUIET_MS));
    tally.add(verdict);
    if (!verdict.ok) throw new Error(`${verdict.kind}\n${verdict.detail}`);
  });
}

const found = (text: string): GeneratedCase => ({
  requests: [{ text, tags: [] }],
  bytes: Buffer.from(text, 'latin1'),
  cuts: [],
});

/** What this property found, each run first every time (fast-check's `examples`). */
export const FOUND: readonly GeneratedCase[] = [
  // the Content-Length named in Connection was dropped, the body (read whole) announced chunked and
  // written raw: the upstream read `GET /admin` as a second request
  found(
    'POST /a HTTP/1.1\r\nHost: example.com\r\nConnection: Content-Length\r\nContent-Length: 49\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: admin.example\r\n\r\n',
  ),
  // node:http ran the pipelined request at once: forwarded, though the answer before it (400 once
  // the body was read) closed the connection
  found(
    `HEAD http://u@b/coffee HTTP/1.1\r\nContent-Length: 7\r\nHost: example.com\r\n\r\nef3,V@x${SMUGGLED}`,
  ),
  // … and before the request ahead of it, which reached the upstream second
  found(`SEARCH / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nw,H\x19E${SMUGGLED}`),
  // node:http answered 417 and read on, where nginx ignores the expectation
  found(
    `HEAD http://u@b/ HTTP/1.1\r\nContent-Length: 3\r\nHost: example.com\r\nExpect: foo\r\n\r\nef3${SMUGGLED}`,
  ),
  // codings other than chunked alone: nginx 501 (node:http reads any list ending in chunked)
  found(
    'POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
  ),
  // a second line of a header nginx keeps one of: 400
  found(
    'POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
  ),
  found('GET / HTTP/1.1\r\nAuthorization: a\r\nHost: example.com\r\nAuthorization: b\r\n\r\n'),
  // Host named in Connection was taken off: the server got its own address
  found('GET / HTTP/1.1\r\nHost: example.com\r\nConnection: Host\r\n\r\n'),
];
