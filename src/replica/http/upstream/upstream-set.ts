/**
 * The replica's upstream groups by name, built from the configuration (a reload builds a new set and
 * closes the old one's idle connections).
 */
import { socketAddressText } from '../../../engine/net/address-text.ts';
import {
  DEFAULT_UPSTREAM_OPTIONS,
  UpstreamGroup,
  type UpstreamGroupSpec,
  type UpstreamLookup,
  type UpstreamOptions,
} from './upstream-group.ts';
import { DEFAULT_KEEPALIVE } from './upstream-keepalive.ts';

/** The most address groups a set keeps (see `UpstreamSet.addressed`). */
const MAX_ADDRESSED = 64;

export class UpstreamSet implements UpstreamLookup {
  readonly #groups = new Map<string, UpstreamGroup>();
  /** Groups of one address each, by `host:port` (or `unix:/path`), in the order they were made (see `addressed`). */
  readonly #addressed = new Map<string, UpstreamGroup>();
  readonly #options: UpstreamOptions;
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
    this.#options = merged;
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

  /**
   * The one-server group for an address a `proxy_pass` with variables evaluated to (nginx connects to
   * an IP address without a resolver), made on first use and kept for its connections; the oldest
   * goes past {@link MAX_ADDRESSED}, so requests cannot make them without bound.
   */
  addressed(server: { readonly host: string; readonly port: number }): UpstreamGroup {
    const name = socketAddressText(server.host, server.port);
    let group = this.#addressed.get(name);
    if (group === undefined) {
      group = new UpstreamGroup(name, [{ ...server, weight: 1 }], this.#options, DEFAULT_KEEPALIVE);
      this.#addressed.set(name, group);
      if (this.#addressed.size > MAX_ADDRESSED) {
        const [oldest, kept] = this.#addressed.entries().next().value!;
        this.#addressed.delete(oldest);
        void kept.close();
      }
    }
    return group;
  }

  /** Every group, in the config's order. */
  groups(): IterableIterator<UpstreamGroup> {
    return this.#groups.values();
  }

  /** Closes every idle connection; busy ones close after their response. Idempotent. */
  close(): Promise<void> {
    const all = [...this.#groups.values(), ...this.#addressed.values()];
    this.#closed ??= Promise.all(all.map((group) => group.close())).then(() => {});
    return this.#closed;
  }
}
