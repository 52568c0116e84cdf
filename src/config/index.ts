/**
 * The configuration language: an nginx.conf subset read with nginx's rules and messages into the
 * model of model.ts.
 *
 * - {@link loadConfigFile}: a main configuration file, like `nginx -t -c FILE`;
 * - {@link loadConfigText}: the same for text that is not on disk (rendered from Kubernetes objects);
 * - {@link parseSnippet}: a snippet (`http-snippets`, `location-snippets`) checked for one context and
 *   returned as a directive tree, ready to be placed into a larger tree and rendered back to text.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type CompileOptions, checkSnippet, compileConfig } from './compiler.ts';
import { ConfigError, errnoSuffix } from './config-error.ts';
import type { Directive, SnippetContext } from './directive.ts';
import type { Config } from './model.ts';
import { parseConfigText } from './parser.ts';

export { ConfigError, type ConfigWarning, errnoSuffix, formatConfigMessage } from './config-error.ts';
export type { Directive, SnippetContext } from './directive.ts';
export { findLogFormat } from './log-format.ts';
export { renderDirectives } from './render.ts';

export interface LoadOptions extends CompileOptions {
  /** Folder for relative `include` paths; defaults to the folder of the file (or source name). */
  readonly prefix?: string;
}

/** Reads and checks a main configuration file; throws {@link ConfigError} as `nginx -t` would fail. */
export function loadConfigFile(path: string, options: LoadOptions = {}): Config {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`open() "${file}" failed ${errnoSuffix(err)}`, file, 0);
  }
  return loadConfigText(text, file, options);
}

/** Like {@link loadConfigFile} for text; `sourceName` is the file name used in messages. */
export function loadConfigText(text: string, sourceName: string, options: LoadOptions = {}): Config {
  const parsed = parseConfigText(text, sourceName, {
    prefix: options.prefix ?? dirname(resolve(sourceName)),
  });
  return deepFreeze(compileConfig(parsed.directives, sourceName, parsed.error, options));
}

/**
 * Parses a snippet written for `context` and checks each directive there (allowed context, arguments,
 * duplicates within the snippet). Zones and variables defined outside the snippet are checked when
 * the whole configuration is loaded.
 */
export function parseSnippet(
  text: string,
  context: SnippetContext,
  sourceName: string,
  options: LoadOptions = {},
): readonly Directive[] {
  const parsed = parseConfigText(text, sourceName, { prefix: options.prefix ?? process.cwd() });
  checkSnippet(parsed.directives, context, { file: sourceName, line: 1 }, parsed.error, options);
  return deepFreeze(parsed.directives);
}

/** Reads a directive tree built in code (no includes) into the model. */
export function compileDirectives(
  directives: readonly Directive[],
  sourceName: string,
  options: CompileOptions = {},
): Config {
  return deepFreeze(compileConfig(directives, sourceName, null, options));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
