/**
 * The main thread's side of `worker_processes N`, as nginx's master: starts N worker threads on the
 * site's shared zones (worker-thread.ts), starts a new one in the place of one that dies (its counter
 * slice, after opening any zone lock it held), and on a reload starts a generation on the new
 * configuration and lets the old one finish its requests. The main thread itself does not serve.
 */
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../config/model.ts';
import { COUNTER_SLICES } from '../../engine/counter-slices.ts';
import type { Site } from '../../engine/http/site.ts';
import { type SiteMemory, shareSite } from '../../engine/http/site-memory.ts';
import type { UpstreamInfo } from '../../engine/upstream/upstream-info.ts';
import { systemClock } from '../../shared/clock.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import { shareConnectionNumbers } from '../http/contract/client-connection.ts';
import type { CallbackKind } from '../http/contract/fault-boundary.ts';
import type { UpstreamSet } from '../http/upstream/upstream-set.ts';
import { DRAIN_MS } from '../listening/listeners.ts';
import type { LoggedRequest, ResponseFacts } from '../logs/access-log.ts';
import type { ErrorLog } from '../logs/error-log.ts';
import type { ProcessLog } from '../logs/process-log.ts';
import { AdmissionDesk } from './admission-desk.ts';
import type { AdmissionAnswer } from './admission-messages.ts';
import { TlsSessionsDesk } from './tls-sessions-desk.ts';
import type { WorkerCommand, WorkerEvent } from './worker-events.ts';
import type { WorkerStart } from './worker-start.ts';
import { workersUpstreamInfo } from './workers-upstreams.ts';

export interface WorkerPoolOptions {
  config(): Config;
  site(): Site;
  /** The main thread's upstream groups: those with a `zone` share their balancer state. */
  upstreams(): UpstreamSet;
  count(): number;
  readonly errorLog: ErrorLog;
  readonly host?: string;
  readonly portMap?: ReadonlyMap<number, number>;
  countRequests(server: string, location: string, count: number): void;
  readonly onCompleted?: (req: LoggedRequest, outcome: ResponseFacts) => void;
  readonly onClientClosed?: (phase: string) => void;
  readonly onDataPathFault?: (kind: CallbackKind) => void;
  readonly log: ProcessLog;
  /** How often workers report upstreams and routed requests (default 1 s). */
  readonly reportIntervalMs?: number;
}

/** One worker thread and what it was started on. */
interface Member {
  readonly worker: Worker;
  readonly slice: number;
  readonly generation: Generation;
  upstreams: readonly UpstreamInfo[];
  /** Its requests waiting for, or holding, the main thread's API limiters and priority levels. */
  readonly desk: AdmissionDesk;
  /** Listened on every port: one that dies after this is started again. */
  listening: boolean;
  stopping: boolean;
}

/** The workers started on one configuration. */
interface Generation {
  readonly config: Config;
  readonly site: Site;
  readonly memory: SiteMemory;
  readonly upstreams: UpstreamSet;
  readonly upstreamMemory: ReadonlyMap<string, SharedArrayBuffer>;
  readonly members: Set<Member>;
  /** Set once it is being drained: how long its workers finish their requests. */
  drainMs: number | null;
}

/** Slice 0 is the main thread's (keyval publications, key expiry); workers count in the rest. */
const MAIN_SLICE = 0;

export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #freeSlices: number[] = [];
  #current: Generation | null = null;
  readonly #draining = new Set<Promise<void>>();
  /** Configured port → bound port, as the workers listen. */
  readonly #ports = new Map<number, number>();
  #addresses: string[] = [];
  #stopping = false;
  /** Generations and replacement workers still starting. */
  readonly #starting = new Set<Promise<unknown>>();
  /** Workers started in the place of one that died. */
  #restarts = 0;
  readonly #connectionNumbers = new SharedArrayBuffer(4);
  /** The TLS ticket keys' seed of every generation's workers (a ticket resumes at any of them). */
  readonly #ticketKeySeed = new Uint8Array(randomBytes(48));
  readonly #tlsSessions = new TlsSessionsDesk();

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    shareConnectionNumbers(this.#connectionNumbers);
    for (let slice = COUNTER_SLICES - 1; slice > MAIN_SLICE; slice--) this.#freeSlices.push(slice);
  }

  get ports(): ReadonlyMap<number, number> {
    return this.#ports;
  }

  addresses(): string[] {
    return this.#addresses;
  }

  /** Worker threads serving now (not those a reload or a stop is draining). */
  get workers(): readonly Worker[] {
    return [...(this.#current?.members ?? [])].filter((m) => !m.stopping).map((m) => m.worker);
  }

  /** Workers started in the place of one that died. */
  get restarts(): number {
    return this.#restarts;
  }

  /** The current workers' upstream groups (workers-upstreams.ts). */
  upstreamInfo(): UpstreamInfo[] {
    const current = this.#current;
    const reports = [...(current?.members ?? [])].map((m) => m.upstreams);
    return current === null ? [] : workersUpstreamInfo(current, reports);
  }

  /** Starts the workers; throws (none left running) when one cannot listen. */
  async start(): Promise<void> {
    this.#current = await this.#startGeneration();
  }

  /**
   * Resolves once every generation and replacement worker being started has started (or failed), and
   * every generation being drained has ended.
   */
  async settled(): Promise<void> {
    while (this.#starting.size + this.#draining.size > 0)
      await Promise.allSettled([...this.#starting, ...this.#draining]);
  }

  /** A new generation on the configuration a reload swapped in; the old one drains once it listens. */
  reload(): void {
    this.#track(this.#startGeneration()).then(
      (next) => {
        // stopped while it started: it goes the way of the others
        if (this.#stopping) return this.#drain(next);
        const old = this.#current;
        this.#current = next;
        if (old !== null) this.#drain(old);
      },
      (err: unknown) =>
        this.#options.log('error', 'the workers of the reloaded configuration could not start', {
          err: String(err),
        }),
    );
  }

  /** Stops every worker: each stops accepting and finishes its requests (forced after `drainMs`). */
  async stop(drainMs = DRAIN_MS): Promise<void> {
    this.#stopping = true;
    if (this.#current !== null) this.#drain(this.#current, drainMs);
    this.#current = null;
    await this.settled();
  }

  async #startGeneration(): Promise<Generation> {
    const site = this.#options.site();
    const config = this.#options.config();
    const upstreams = this.#options.upstreams();
    const zoned = config.http.upstreams.filter((u) => u.zone !== undefined).map((u) => u.name);
    const generation: Generation = {
      config,
      site,
      memory: shareSite(site),
      upstreams,
      upstreamMemory: upstreams.share(zoned),
      members: new Set(),
      drainMs: null,
    };
    try {
      // the first binds any port 0; the others listen on what it bound
      await this.#spawn(generation, this.#takeSlice());
      const rest = Array.from({ length: this.#options.count() - 1 }, () => this.#takeSlice());
      await Promise.all(rest.map((slice) => this.#spawn(generation, slice)));
    } catch (err) {
      this.#drain(generation, 0);
      throw err;
    }
    return generation;
  }

  #takeSlice(): number {
    const slice = this.#freeSlices.pop();
    if (slice === undefined)
      throw new LimitswitchError('InternalError', 'no counter slice left for a worker');
    return slice;
  }

  /** Starts one worker; resolves once it listens on every port. */
  #spawn(generation: Generation, slice: number): Promise<void> {
    const options = this.#options;
    const start: WorkerStart = {
      config: generation.config,
      memory: generation.memory,
      upstreamMemory: generation.upstreamMemory,
      slice,
      connectionNumbers: this.#connectionNumbers,
      ticketKeySeed: this.#ticketKeySeed,
      host: options.host,
      portMap: new Map([...(options.portMap ?? []), ...this.#ports]),
      errorLogLevel: options.errorLog.level,
      reportCompleted: options.onCompleted !== undefined,
      reportIntervalMs: options.reportIntervalMs ?? 1000,
    };
    const worker = new Worker(new URL('./worker-thread.ts', import.meta.url), {
      workerData: start,
      // where the runtime cannot strip types itself, the worker loads its sources as the process does
      ...((process.features as { typescript?: unknown }).typescript
        ? {}
        : { execArgv: [...process.execArgv, '--import', 'tsx'] }),
    });
    const answer = (answer: AdmissionAnswer) => {
      const command: WorkerCommand = { kind: 'admission', answer };
      worker.postMessage(command);
    };
    const desk = new AdmissionDesk(() => generation.site, systemClock, answer);
    const member: Member = {
      worker,
      slice,
      generation,
      upstreams: [],
      desk,
      listening: false,
      stopping: false,
    };
    generation.members.add(member);
    return new Promise((resolve, reject) => {
      worker.on('message', (events: WorkerEvent[]) => {
        for (const event of events) {
          if (event.kind === 'listening') {
            member.listening = true;
            // every worker binds the same ports: the first of a generation decides any port 0
            for (const [configured, bound] of event.ports) this.#ports.set(configured, bound);
            this.#addresses = event.addresses;
            // a replacement that started after its generation was told to stop
            if (generation.drainMs !== null) this.#stop(member, generation.drainMs);
            resolve();
          } else if (event.kind === 'failed') {
            const code = event.code === 'RL_ERR_BIND' ? 'RL_ERR_BIND' : 'InternalError';
            reject(new LimitswitchError(code, event.message));
          } else this.#dispatch(member, event);
        }
      });
      worker.on('error', (err) => {
        if (!member.listening) reject(err);
        else options.log('error', 'a worker thread failed', { slice, err: String(err) });
      });
      worker.on('exit', (code) => {
        generation.members.delete(member);
        if (!member.listening)
          reject(
            new LimitswitchError('InternalError', `a worker thread exited (code ${code}) before it listened`),
          );
        this.#exited(member, code);
      });
    });
  }

  #dispatch(member: Member, event: WorkerEvent): void {
    const options = this.#options;
    switch (event.kind) {
      case 'error-log':
        options.errorLog.forward(event.line);
        break;
      case 'completed':
        options.onCompleted?.(event.req, event.facts);
        break;
      case 'client-closed':
        options.onClientClosed?.(event.phase);
        break;
      case 'data-path-fault':
        options.onDataPathFault?.(event.callback);
        break;
      case 'log':
        options.log(event.level, event.message, event.fields);
        break;
      case 'requests':
        for (const { server, location, count } of event.counts)
          options.countRequests(server, location, count);
        break;
      case 'upstreams':
        member.upstreams = event.upstreams;
        break;
      case 'admission':
        member.desk.take(event.request);
        break;
      case 'tls-session':
        this.#tlsSessions.take(event, (command) => member.worker.postMessage(command));
        break;
    }
  }

  /**
   * A worker ended. One that was not asked to stop died: any zone lock it held is opened (it ran no
   * `finally`), and a new worker takes its slice, as nginx's master respawns a worker.
   */
  #exited(member: Member, code: number): void {
    const { generation, slice } = member;
    member.desk.close();
    if (!member.listening || member.stopping || this.#stopping || generation !== this.#current) {
      this.#freeSlices.push(slice);
      return;
    }
    for (const zone of generation.site.limitReqZones.values()) zone.forceUnlock(slice);
    for (const zone of generation.site.limitConnZones.values()) zone.forceUnlock(slice);
    for (const name of generation.upstreamMemory.keys())
      generation.upstreams.get(name)?.forceUnlock(slice + 1);
    this.#options.errorLog.message('alert', `worker thread of slice ${slice} exited with code ${code}`);
    this.#restarts++;
    this.#track(this.#spawn(generation, slice)).catch((err: unknown) => {
      this.#freeSlices.push(slice);
      this.#options.log('error', 'a worker thread could not be started again', { slice, err: String(err) });
    });
  }

  #track<T>(starting: Promise<T>): Promise<T> {
    const tracked = starting.finally(() => this.#starting.delete(tracked));
    this.#starting.add(tracked);
    return tracked;
  }

  /** Asks a generation's workers to stop, and any that starts later (a replacement) as it listens. */
  #drain(generation: Generation, drainMs = DRAIN_MS): void {
    generation.drainMs = drainMs;
    for (const member of generation.members) this.#stop(member, drainMs);
  }

  /** Asks one worker to stop; tracked until it has exited. */
  #stop(member: Member, drainMs: number): void {
    if (member.stopping) return;
    member.stopping = true;
    const exited = new Promise<void>((resolve) => member.worker.once('exit', () => resolve())).then(() => {
      this.#draining.delete(exited);
    });
    this.#draining.add(exited);
    const command: WorkerCommand = { kind: 'stop', drainMs };
    member.worker.postMessage(command);
  }
}
