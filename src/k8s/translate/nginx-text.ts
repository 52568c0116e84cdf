/** Helpers for writing nginx config text: argument quoting and indented blocks. */

const NEEDS_QUOTES = /[\s;{}"'#\\]/;

/** An argument as nginx reads it back unchanged: bare when safe, else double-quoted with escapes. */
export function quoteArg(value: string): string {
  // `${name}` is read by nginx's tokenizer as part of the word, so its braces need no quotes.
  if (value !== '' && !NEEDS_QUOTES.test(value.replace(/\$\{[A-Za-z0-9_]+\}/g, ''))) return value;
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** One directive line: `name arg arg;` (arguments already quoted as needed). */
export function directive(name: string, ...args: string[]): string {
  return args.length === 0 ? `${name};` : `${name} ${args.join(' ')};`;
}

/** Accumulates lines with four-space indentation per nesting level, like nginx's own examples. */
export class ConfigWriter {
  private readonly lines: string[] = [];
  /** Line index → the object field that line came from (snippets), for pointing parse errors back. */
  private readonly origins = new Map<number, string>();
  private depth = 0;

  line(text: string): this {
    this.lines.push(text === '' ? '' : `${'    '.repeat(this.depth)}${text}`);
    return this;
  }

  /** Lines taken verbatim from a snippet, re-indented to the current level (their own indent kept). */
  snippet(lines: readonly string[], origin?: string): this {
    for (const l of lines) {
      if (origin !== undefined) this.origins.set(this.lines.length, origin);
      this.line(l);
    }
    return this;
  }

  /** The field a 1-based line of the text came from, when it was written with an origin. */
  originOf(line: number): string | undefined {
    return this.origins.get(line - 1);
  }

  open(header: string): this {
    this.line(`${header} {`);
    this.depth++;
    return this;
  }

  close(): this {
    this.depth--;
    return this.line('}');
  }

  blank(): this {
    const last = this.lines[this.lines.length - 1];
    if (last !== undefined && last !== '' && !last.endsWith('{')) this.lines.push('');
    return this;
  }

  toString(): string {
    return `${this.lines.join('\n')}\n`;
  }
}
