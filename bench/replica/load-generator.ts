/**
 * The benchmark's load generator, in its own process so it never shares an event loop with a server
 * under test: an undici Pool with N keep-alive connections, each with one request in flight at a time
 * (like autocannon's defaults), driven through undici's raw dispatch handler so the generator spends
 * as little CPU per request as it can.
 *
 * Protocol (IPC): the generator says `{ phase: 'ready' }` once; then the parent sends `{ port, connections, warmupMs, durationMs }`; the generator answers
 * `{ phase: 'measuring' }` when the warm-up ends and `{ phase: 'done', ...LoadResult }` at the end.
 */
import { Pool } from 'undici';

export interface LoadRequest {
  readonly port: number;
  readonly connections: number;
  readonly warmupMs: number;
  readonly durationMs: number;
}

export interface LoadResult {
  /** Responses completed inside the measuring window. */
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly elapsedMs: number;
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

  constructor(port: number, connections: number) {
    this.pool = new Pool(`http://127.0.0.1:${port}`, { connections, pipelining: 1 });
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
  constructor(readonly run: Run) {}
  onConnect(): void {}
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

async function load(request: LoadRequest): Promise<LoadResult> {
  const run = new Run(request.port, request.connections);
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
  return { requests: run.requests, non2xx: run.non2xx, errors: run.errors, elapsedMs };
}

process.send?.({ phase: 'ready' });
process.on('message', (message: LoadRequest) => {
  void load(message).then((result) => process.send?.({ phase: 'done', ...result }));
});
process.on('disconnect', () => process.exit(0));
