/**
 * nginx.conf text → directive tree. `include file;` is expanded in place (glob patterns allowed); its
 * relative paths are resolved against the prefix, the folder of the main configuration file, as nginx
 * does. A syntax error stops parsing: the tree keeps what came before it and the error is returned, so
 * the caller can report earlier directive errors first, in nginx's order.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, errnoSuffix } from './config-error.ts';
import type { Directive } from './directive.ts';
import { expandGlob, hasGlobMagic } from './glob.ts';
import { Tokenizer } from './tokenizer.ts';

/** Deep enough for any real layout, small enough to stop an `include` that includes itself. */
const MAX_INCLUDE_DEPTH = 32;

export interface ParseOptions {
  /** The folder relative `include` paths are resolved against. */
  readonly prefix: string;
}

export interface ParseResult {
  /** Everything parsed before `error` (all of it when there is none). */
  readonly directives: readonly Directive[];
  readonly error: ConfigError | null;
}

type MutableDirective = {
  name: string;
  args: string[];
  file: string;
  line: number;
  block: MutableDirective[] | null;
  endLine: number;
};

/** Parses one file's text; never throws for configuration faults (see {@link ParseResult}). */
export function parseConfigText(text: string, file: string, options: ParseOptions): ParseResult {
  const directives: MutableDirective[] = [];
  try {
    new Parser(options.prefix).parseText(text, file, directives, 0);
  } catch (err) {
    if (err instanceof ConfigError) return { directives, error: err };
    throw err;
  }
  return { directives, error: null };
}

class Parser {
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  parseText(text: string, file: string, into: MutableDirective[], depth: number): void {
    this.#parseList(new Tokenizer(text, file), file, into, false, depth);
  }

  /** Reads statements into `into` until `}` (in a block) or the end of the file; returns that line. */
  #parseList(
    tokenizer: Tokenizer,
    file: string,
    into: MutableDirective[],
    inBlock: boolean,
    depth: number,
  ): number {
    for (;;) {
      const statement = tokenizer.next();
      if (statement.end === '}') {
        if (!inBlock) throw new ConfigError('unexpected "}"', file, statement.line);
        return statement.line;
      }
      if (statement.end === 'eof') {
        if (inBlock) throw new ConfigError('unexpected end of file, expecting "}"', file, statement.line);
        return statement.line;
      }
      const [name, ...args] = statement.args as [string, ...string[]];
      if (name === 'include' && statement.end === ';' && args.length === 1) {
        this.#include(args[0]!, file, statement.line, into, depth);
        continue;
      }
      // any other shape of `include` stays in the tree for the directive checks to reject
      const node: MutableDirective = {
        name,
        args,
        file,
        line: statement.line,
        block: statement.end === '{' ? [] : null,
        endLine: 0,
      };
      into.push(node);
      if (node.block) node.endLine = this.#parseList(tokenizer, file, node.block, true, depth);
    }
  }

  #include(pattern: string, file: string, line: number, into: MutableDirective[], depth: number): void {
    if (depth >= MAX_INCLUDE_DEPTH)
      throw new ConfigError(`include nesting is deeper than ${MAX_INCLUDE_DEPTH} levels`, file, line);
    const path = resolve(this.#prefix, pattern);
    for (const included of hasGlobMagic(path) ? expandGlob(path) : [path]) {
      let text: string;
      try {
        text = readFileSync(included, 'utf8');
      } catch (err) {
        const call = (err as { code?: unknown }).code === 'EISDIR' ? 'pread()' : 'open()';
        throw new ConfigError(`${call} "${included}" failed ${errnoSuffix(err)}`, file, line);
      }
      this.parseText(text, included, into, depth + 1);
    }
  }
}
