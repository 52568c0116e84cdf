/**
 * The benchmark's load generator, in its own process so it never shares an event loop with a server
 * under test: an undici Pool with N keep-alive connections, each with one request in flight at a time
 * (like autocannon's defaults), driven through undici's raw dispatch handler so the generator spends
 * as little CPU per request as it can.
 *
 * `protocol`: `http` (default), `https` (TLS, HTTP/1.1), `h2` (one TLS connection, `connections` streams
 * on it at a time), or `handshakes` (`connections` clients each opening a TLS connection, completing
 * the handshake and closing it, again and again: full handshakes, no session reuse). `latency`: also
 * record each request's time, for p50/p99.
 *
 * Protocol (IPC): the generator says `{ phase: 'ready' }` once; then the parent sends `{ port, connections, warmupMs, durationMs }`; the generator answers
 * `{ phase: 'measuring' }` when the warm-up ends and `{ phase: 'done', ...LoadResult }` at the end.
 */
import { connect as tlsConnect } from 'node:tls';
import { Pool } from 'undici';

export interface LoadRequest {
  readonly port: number;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly protocol?: 'http' | 'https' | 'h2' | 'handshakes';
  readonly latency?: boolean;
}

export interface LoadResult {
  /** Responses completed inside the measuring window. */
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly elapsedMs: number;
  /** With `latency`: the 50th and 99th percentile of a request's time, ms. */
  readonly p50Ms?: number;
  readonly p99Ms?: number;
}

const HEADERS = ['host', 'cafe.example.com', 'user-agent', 'limitswitch-bench'];

class Run {
  readonly pool: Pool;
  measuring = false;
  stopping = false;
  requests = 0;
  non2xx = 0;
  errors = 0;
  inFlight = 0;
  #drained: (() => void) | null = null;

  readonly latencies: number[] | null;

  constructor(port: number, connections: number, protocol: LoadRequest['protocol'], latency: boolean) {
    const tls = { rejectUnauthorized: false, servername: 'cafe.example.com' };
    this.pool =
      protocol === 'h2'
        ? new Pool(`https://127.0.0.1:${port}`, {
            connections: 1,
            allowH2: true,
            pipelining: connections,
            connect: tls,
          })
        : protocol === 'https'
          ? new Pool(`https://127.0.0.1:${port}`, { connections, pipelining: 1, connect: tls })
          : new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
    this.latencies = latency ? [] : null;
  }

  issue(slot: Slot): void {
    if (this.stopping) {
      if (--this.inFlight === 0) this.#drained?.();
      return;
    }
    this.pool.dispatch({ path: '/', method: 'GET', headers: HEADERS }, slot);
  }

  drained(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => (this.#drained = resolve));
  }
}

/** One request in flight, reused for the next one. */
class Slot {
  status = 0;
  startedMs = 0;
  readonly run: Run;
  constructor(run: Run) {
    this.run = run;
  }
  onConnect(): void {
    if (this.run.latencies !== null) this.startedMs = performance.now();
  }
  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }
  onData(): boolean {
    return true;
  }
  onComplete(): void {
    const run = this.run;
    if (run.measuring) {
      run.requests++;
      if (this.status < 200 || this.status > 299) run.non2xx++;
      run.latencies?.push(performance.now() - this.startedMs);
    }
    run.issue(this);
  }
  onError(): void {
    const run = this.run;
    if (run.measuring) run.errors++;
    // back off a little so a dead target does not spin the generator
    setTimeout(() => run.issue(this), 10);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Full TLS handshakes, `connections` at a time, for the window. */
async function handshakes(request: LoadRequest): Promise<LoadResult> {
  let measuring = false;
  let stopping = false;
  let done = 0;
  let errors = 0;
  const client = async (): Promise<void> => {
    while (!stopping) {
      const ok = await new Promise<boolean>((resolve) => {
        const socket = tlsConnect(
          {
            host: '127.0.0.1',
            port: request.port,
            servername: 'cafe.example.com',
            rejectUnauthorized: false,
          },
          () => {
            socket.destroy();
            resolve(true);
          },
        );
        socket.once('error', () => resolve(false));
      });
      if (measuring) {
        if (ok) done++;
        else errors++;
      }
    }
  };
  const clients = Array.from({ length: request.connections }, client);
  await sleep(request.warmupMs);
  measuring = true;
  process.send?.({ phase: 'measuring' });
  const startMs = performance.now();
  await sleep(request.durationMs);
  measuring = false;
  const elapsedMs = performance.now() - startMs;
  stopping = true;
  await Promise.all(clients);
  return { requests: done, non2xx: 0, errors, elapsedMs };
}

const percentile = (values: number[], p: number): number => {
  const sorted = values.sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
};

async function load(request: LoadRequest): Promise<LoadResult> {
  if (request.protocol === 'handshakes') return handshakes(request);
  const run = new Run(request.port, request.connections, request.protocol, request.latency === true);
  for (let i = 0; i < request.connections; i++) {
    run.inFlight++;
    run.issue(new Slot(run));
  }
  await sleep(request.warmupMs);
  run.measuring = true;
  process.send?.({ phase: 'measuring' });
  const startMs = performance.now();
  await sleep(request.durationMs);
  run.measuring = false;
  const elapsedMs = performance.now() - startMs;
  run.stopping = true;
  await run.drained();
  await run.pool.close();
  const result: LoadResult = { requests: run.requests, non2xx: run.non2xx, errors: run.errors, elapsedMs };
  if (run.latencies === null) return result;
  return { ...result, p50Ms: percentile(run.latencies, 0.5), p99Ms: percentile(run.latencies, 0.99) };
}

process.send?.({ phase: 'ready' });
process.on('message', (message: LoadRequest) => {
  void load(message).then((result) => process.send?.({ phase: 'done', ...result }));
});
process.on('disconnect', () => process.exit(0));
