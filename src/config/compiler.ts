/**
 * Reads a directive tree through the directive table, in document order, with ngx_conf_handler's
 * checks: known name, allowed context, `;` vs `{`, argument count; then the directive's handler.
 * A syntax error the parser stopped at is raised once everything before it has been read, which is
 * when nginx would meet it.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { newHttp, newLocation, newServer } from './builders.ts';
import { type ConfigError, type ConfigWarning, configError } from './config-error.ts';
import type { Directive, SnippetContext } from './directive.ts';
import { lookupDirective } from './directives/table.ts';
import type { ArgSpec, MainState, Scope, Session } from './directives/types.ts';
import { UNSUPPORTED_DIRECTIVES } from './directives/unsupported.ts';
import { checkSharedMemory } from './finish.ts';
import { buildHttpConf, emptyHttpConf } from './merge.ts';
import type { Config, SourceRef } from './model.ts';

/** NGX_CONF_MAX_ARGS: directives taking "1 or more" arguments still stop at 8. */
const MAX_ARGS = 8;

export interface CompileOptions {
  /** Receives `[warn]` findings (nginx -t prints them and still succeeds). */
  readonly onWarning?: (warning: ConfigWarning) => void;
  /**
   * Files the configuration names that are not on disk (Kubernetes Secrets): full path → text, or
   * undefined to read the disk.
   */
  readonly files?: (fullPath: string) => string | undefined;
  /** The conf prefix relative file names are resolved against (default: the main file's folder). */
  readonly confPrefix?: string;
}

class Reader implements Session {
  readonly #pending: ConfigError | null;
  readonly #onWarning: ((warning: ConfigWarning) => void) | undefined;
  readonly #files: ((fullPath: string) => string | undefined) | undefined;
  readonly #confPrefix: string;

  constructor(pending: ConfigError | null, options: CompileOptions, mainFile: string) {
    this.#pending = pending;
    this.#onWarning = options.onWarning;
    this.#files = options.files;
    this.#confPrefix = options.confPrefix ?? dirname(resolve(mainFile));
  }

  fullPath(path: string): string {
    return isAbsolute(path) ? path : resolve(this.#confPrefix, path);
  }

  readFile(fullPath: string): string {
    return this.#files?.(fullPath) ?? readFileSync(fullPath, 'utf8');
  }

  walk(directives: readonly Directive[], scope: Scope): void {
    for (const d of directives) this.#handle(d, scope);
  }

  walkBlock(d: Directive, scope: Scope): number {
    this.walk(d.block ?? [], scope);
    return this.blockEnd(d);
  }

  blockEnd(d: Directive): number {
    // a block left open by a syntax error ends where that error is
    if (d.endLine === 0 && this.#pending) throw this.#pending;
    return d.endLine || d.line;
  }

  warn(text: string, at: SourceRef): void {
    this.#onWarning?.({ text, file: at.file, line: at.line });
  }

  /** Raises the parser's error, if any, after the tree before it was read. */
  finish(): void {
    if (this.#pending) throw this.#pending;
  }

  #handle(d: Directive, scope: Scope): void {
    if (UNSUPPORTED_DIRECTIVES.has(d.name))
      throw configError(`"${d.name}" directive is not supported by limitswitch`, d);
    const specs = lookupDirective(d.name);
    if (!specs) throw configError(`unknown directive "${d.name}"`, d);
    const spec = specs.find((s) => s.contexts.includes(scope.kind));
    if (!spec) throw configError(`"${d.name}" directive is not allowed here`, d);
    if (!spec.block && d.block) throw configError(`directive "${d.name}" is not terminated by ";"`, d);
    if (spec.block && !d.block) throw configError(`directive "${d.name}" has no opening "{"`, d);
    if (!argCountFits(spec.args, d.args.length))
      throw configError(`invalid number of arguments in "${d.name}" directive`, d);
    spec.handle(d, scope);
  }
}

function argCountFits(spec: ArgSpec, count: number): boolean {
  if (spec === 'any') return true;
  if (count > MAX_ARGS) return false;
  if (spec === '1+') return count >= 1;
  if (spec === '2+') return count >= 2;
  return spec.includes(count);
}

function rootScope(session: Session, main: MainState): Scope {
  return { kind: 'main', session, main, http: null, server: null, location: null, upstream: null };
}

/**
 * Reads a whole configuration (main context) into the model. `pending` is the error that stopped the
 * parser, if any.
 */
export function compileConfig(
  directives: readonly Directive[],
  file: string,
  pending: ConfigError | null,
  options: CompileOptions = {},
): Config {
  const reader = new Reader(pending, options, file);
  const main: MainState = { http: null, events: false, workerProcesses: null };
  reader.walk(directives, rootScope(reader, main));
  reader.finish();
  if (main.http) checkSharedMemory(main.http);
  const http = main.http ? buildHttpConf(main.http) : emptyHttpConf();
  return main.workerProcesses === null
    ? { file, http }
    : { file, http, workerProcesses: main.workerProcesses };
}

/**
 * Reads a snippet in an empty block of the given context: every directive is checked on its own;
 * what needs the whole configuration (zones and variables defined elsewhere) is not.
 */
export function checkSnippet(
  directives: readonly Directive[],
  context: SnippetContext,
  source: SourceRef,
  pending: ConfigError | null,
  options: CompileOptions = {},
): void {
  const reader = new Reader(pending, options, source.file);
  const main: MainState = { http: newHttp(source), events: false, workerProcesses: null };
  const server = context === 'http' ? null : newServer(source);
  // an empty prefix: any nested location is inside it
  const location = context === 'location' ? newLocation(source, 'prefix', '', null, false) : null;
  const scope: Scope = { ...rootScope(reader, main), kind: context, http: main.http, server, location };
  reader.walk(directives, scope);
  reader.finish();
}
