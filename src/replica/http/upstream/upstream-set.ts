/**
 * The replica's upstream groups by name, built from the configuration (a reload builds a new set and
 * closes the old one's idle connections).
 */
import {
  DEFAULT_UPSTREAM_OPTIONS,
  UpstreamGroup,
  type UpstreamGroupSpec,
  type UpstreamLookup,
  type UpstreamOptions,
} from './upstream-group.ts';

export class UpstreamSet implements UpstreamLookup {
  readonly #groups = new Map<string, UpstreamGroup>();
  #closed: Promise<void> | null = null;

  /**
   * `shared`: another thread's groups' state ({@link share}), by group name, and this thread's lock
   * holder: those groups work on it.
   */
  constructor(
    specs: readonly UpstreamGroupSpec[],
    options: Partial<UpstreamOptions> = {},
    shared?: { readonly memory: ReadonlyMap<string, SharedArrayBuffer>; readonly holder: number },
  ) {
    const merged = { ...DEFAULT_UPSTREAM_OPTIONS, ...options };
    for (const spec of specs) {
      const memory = shared?.memory.get(spec.name);
      const attach = memory === undefined ? undefined : { memory, holder: shared!.holder };
      this.#groups.set(
        spec.name,
        new UpstreamGroup(spec.name, spec.servers, merged, spec.keepalive, spec.queue ?? null, attach),
      );
    }
  }

  /** The state of every group with a `zone`, by name, for worker threads' groups to attach to. */
  share(zoned: readonly string[]): Map<string, SharedArrayBuffer> {
    return new Map(
      zoned.flatMap((name) => {
        const group = this.#groups.get(name);
        return group === undefined ? [] : [[name, group.share()]];
      }),
    );
  }

  get(name: string): UpstreamGroup | undefined {
    return this.#groups.get(name);
  }

  /** Every group, in the config's order. */
  groups(): IterableIterator<UpstreamGroup> {
    return this.#groups.values();
  }

  /** Closes every idle connection; busy ones close after their response. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= Promise.all([...this.#groups.values()].map((group) => group.close())).then(() => {});
    return this.#closed;
  }
}
