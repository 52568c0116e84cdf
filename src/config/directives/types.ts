/**
 * The shape of the directive table: which contexts a directive is allowed in, how many arguments it
 * takes, and the handler that reads it into the builders of the enclosing blocks.
 */
import type { HttpBuilder, LocationBuilder, ServerBuilder, UpstreamBuilder } from '../builders.ts';
import type { Directive } from '../directive.ts';
import type { SourceRef, WorkerProcessesConf } from '../model.ts';

/** nginx's configuration contexts that limitswitch reads (`map`, `geo`, `types` read their own lines). */
export type ContextKind = 'main' | 'events' | 'http' | 'server' | 'location' | 'upstream';

/** Allowed argument counts (after the name), or nginx's NGX_CONF_1MORE / 2MORE / ANY. */
export type ArgSpec = readonly number[] | '1+' | '2+' | 'any';

export interface DirectiveSpec {
  readonly name: string;
  readonly contexts: readonly ContextKind[];
  /** `name … { … }` rather than `name …;`. */
  readonly block?: boolean;
  readonly args: ArgSpec;
  readonly handle: (d: Directive, scope: Scope) => void;
}

/** What handlers need from the reader that drives them. */
export interface Session {
  /** Reads a block's children in `scope`; returns the line of its closing `}`. */
  walkBlock(d: Directive, scope: Scope): number;
  /** For blocks that read their own lines (map, geo, types): the line of the closing `}`. */
  blockEnd(d: Directive): number;
  warn(text: string, at: SourceRef): void;
  /** A path as nginx resolves it: relative to the conf prefix (the main file's folder). */
  fullPath(path: string): string;
  /** A file the configuration names (certificates): the options' files first, else the disk. */
  readFile(fullPath: string): string;
}

/** The main context's own state. */
export interface MainState {
  http: HttpBuilder | null;
  events: boolean;
  workerProcesses: WorkerProcessesConf | null;
}

/** Where a directive stands: the context kind and the builders of every enclosing block. */
export interface Scope {
  readonly kind: ContextKind;
  readonly session: Session;
  readonly main: MainState;
  readonly http: HttpBuilder | null;
  readonly server: ServerBuilder | null;
  readonly location: LocationBuilder | null;
  readonly upstream: UpstreamBuilder | null;
}
