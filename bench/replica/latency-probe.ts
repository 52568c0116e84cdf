/**
 * The benchmark's latency probe, in its own process: requests at a fixed rate (open loop: each one is
 * due at its time whether or not the ones before have come back), over a few keep-alive connections or
 * a fresh connection each (`fresh`), each timed from when it was due to the last byte of its answer,
 * so time spent queued counts.
 *
 * Protocol (IPC): the probe says `{ phase: 'ready' }` once; then the parent sends a `ProbeRequest` and
 * the probe answers with a `ProbeResult`.
 */
import { Pool } from 'undici';

export interface ProbeRequest {
  readonly port: number;
  readonly path: string;
  readonly ratePerS: number;
  readonly durationMs: number;
  readonly connections: number;
  /** A connection per request (`Connection: close`), as curl makes. */
  readonly fresh: boolean;
}

export interface ProbeResult {
  /** One per request answered with a 2xx, in ms. */
  readonly latenciesMs: number[];
  readonly non2xx: number;
  readonly errors: number;
}

const HEADERS = ['host', 'cafe.example.com', 'user-agent', 'limitswitch-bench'];

class Probe {
  readonly latenciesMs: number[] = [];
  non2xx = 0;
  errors = 0;
  outstanding = 0;
  #done: (() => void) | null = null;

  finished(): Promise<void> {
    return this.outstanding === 0 ? Promise.resolve() : new Promise((resolve) => (this.#done = resolve));
  }

  settled(): void {
    if (--this.outstanding === 0) this.#done?.();
  }
}

/** One request, timed from the moment it was due. */
class Timed {
  status = 0;
  readonly probe: Probe;
  readonly dueMs: number;
  constructor(probe: Probe, dueMs: number) {
    this.probe = probe;
    this.dueMs = dueMs;
  }
  onConnect(): void {}
  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }
  onData(): boolean {
    return true;
  }
  onComplete(): void {
    const probe = this.probe;
    if (this.status >= 200 && this.status < 300) probe.latenciesMs.push(performance.now() - this.dueMs);
    else probe.non2xx++;
    probe.settled();
  }
  onError(): void {
    this.probe.errors++;
    this.probe.settled();
  }
}

async function run(request: ProbeRequest): Promise<ProbeResult> {
  const pool = new Pool(`http://127.0.0.1:${request.port}`, {
    connections: request.connections,
    pipelining: 1,
  });
  const probe = new Probe();
  const intervalMs = 1000 / request.ratePerS;
  const startMs = performance.now();
  const endMs = startMs + request.durationMs;
  let nextMs = startMs;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const nowMs = performance.now();
      while (nextMs <= nowMs && nextMs < endMs) {
        probe.outstanding++;
        pool.dispatch(
          { path: request.path, method: 'GET', headers: HEADERS, reset: request.fresh },
          new Timed(probe, nextMs),
        );
        nextMs += intervalMs;
      }
      if (nextMs < endMs) setTimeout(tick, Math.max(0, nextMs - performance.now()));
      else resolve();
    };
    tick();
  });
  await probe.finished();
  await pool.close();
  return { latenciesMs: probe.latenciesMs, non2xx: probe.non2xx, errors: probe.errors };
}

process.send?.({ phase: 'ready' });
process.on('message', (message: ProbeRequest) => {
  void run(message).then((result) => process.send?.(result));
});
process.on('disconnect', () => process.exit(0));
