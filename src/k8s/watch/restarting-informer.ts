/**
 * An informer that does not stay down. @kubernetes/client-node 1.4's `makeInformer` lists, then
 * watches from the list's resourceVersion, re-watches after a clean close and re-lists on 410 Gone —
 * but on any other error (a refused connection, a 503, a dropped stream) it emits `error` and stops.
 * This wrapper starts it again with exponential backoff; the informer keeps its last resourceVersion,
 * so a restart resumes the watch where it broke instead of re-listing.
 */
import { EventEmitter } from 'node:events';
import {
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  makeInformer,
} from '@kubernetes/client-node';

export interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 30_000 };

export interface RestartingInformerEvents {
  change: [];
  /** The informer stopped on `error`; it starts again after `delayMs`. */
  restart: [error: unknown, attempt: number, delayMs: number];
}

export class RestartingInformer<T extends KubernetesObject> extends EventEmitter<RestartingInformerEvents> {
  private readonly informer;
  private timer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopped = false;
  private listed = false;
  private syncedResolve: (() => void) | null = null;
  /** Resolves after the first successful list. */
  readonly synced: Promise<void>;

  readonly path: string;
  private readonly backoff: Backoff;

  constructor(
    kubeConfig: KubeConfig,
    path: string,
    list: ListPromise<T>,
    backoff: Backoff = DEFAULT_BACKOFF,
  ) {
    super();
    this.path = path;
    this.backoff = backoff;
    this.synced = new Promise((resolve) => {
      this.syncedResolve = resolve;
    });
    const listAndMark: ListPromise<T> = async () => {
      const result = await list();
      this.listed = true;
      this.attempt = 0;
      return result;
    };
    this.informer = makeInformer<T>(kubeConfig, path, listAndMark);
    const changed = () => {
      this.attempt = 0;
      this.emit('change');
    };
    this.informer.on('add', changed);
    this.informer.on('update', changed);
    this.informer.on('delete', changed);
    this.informer.on('error', (err: unknown) => this.scheduleRestart(err));
  }

  private scheduleRestart(err: unknown): void {
    if (this.stopped || this.timer) return;
    const delayMs = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.attempt);
    this.attempt++;
    this.emit('restart', err, this.attempt, delayMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run().catch((e: unknown) => this.scheduleRestart(e));
    }, delayMs);
  }

  private async run(): Promise<void> {
    if (this.stopped) return;
    await this.informer.start();
    if (this.listed && this.syncedResolve) {
      this.syncedResolve();
      this.syncedResolve = null;
      // An empty list fires no `add`; the consumer still needs to learn that the cache is ready.
      this.emit('change');
    }
  }

  /** Starts listing and watching; `synced` resolves once the first list has arrived. */
  start(): void {
    this.stopped = false;
    this.run().catch((e: unknown) => this.scheduleRestart(e));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.informer.stop();
  }

  list(): readonly T[] {
    return this.informer.list();
  }
}
