/**
 * The nginx.conf tokenizer, a port of ngx_conf_read_token (src/core/ngx_conf_file.c): words,
 * '…' and "…" with backslash escapes, `#` comments, `;` `{` `}`, `$var` and `${var}` inside words.
 * It reads one statement at a time, so errors surface in the order nginx finds them.
 */
import { ConfigError } from './config-error.ts';

/** How a statement ended: `;`, `{` (block start), `}` (block end) or the end of the text. */
export type StatementEnd = ';' | '{' | '}' | 'eof';

/** The words of one directive (empty for `}` and end of file) and the line where it ended. */
export interface Statement {
  readonly args: string[];
  readonly end: StatementEnd;
  readonly line: number;
}

const isSpace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';

/** Reads statements from one file's text; throws {@link ConfigError} with nginx's wording. */
export class Tokenizer {
  readonly #text: string;
  readonly #file: string;
  #pos = 0;
  #line = 1;

  constructor(text: string, file: string) {
    this.#text = text;
    this.#file = file;
  }

  /** The current line (1-based), as nginx counts it: one more than the newlines read so far. */
  get line(): number {
    return this.#line;
  }

  next(): Statement {
    const text = this.#text;
    const args: string[] = [];
    let needSpace = false;
    let lastSpace = true;
    let sharpComment = false;
    let variable = false;
    let quoted = false;
    let sQuoted = false;
    let dQuoted = false;
    let start = this.#pos;

    for (;;) {
      if (this.#pos >= text.length) {
        if (args.length > 0 || !lastSpace) throw this.#error('unexpected end of file, expecting ";" or "}"');
        return { args, end: 'eof', line: this.#line };
      }
      const ch = text[this.#pos++]!;
      if (ch === '\n') {
        this.#line++;
        sharpComment = false;
      }
      if (sharpComment) continue;
      if (quoted) {
        quoted = false;
        continue;
      }
      if (needSpace) {
        if (isSpace(ch)) {
          lastSpace = true;
          needSpace = false;
          continue;
        }
        if (ch === ';' || ch === '{') return { args, end: ch, line: this.#line };
        // `)` may follow a quoted word (`if ("…")`); it then starts a new word
        if (ch !== ')') throw this.#error(`unexpected "${ch}"`);
        lastSpace = true;
        needSpace = false;
      }

      if (lastSpace) {
        start = this.#pos - 1;
        if (isSpace(ch)) continue;
        switch (ch) {
          case ';':
          case '{':
            if (args.length === 0) throw this.#error(`unexpected "${ch}"`);
            return { args, end: ch, line: this.#line };
          case '}':
            if (args.length !== 0) throw this.#error('unexpected "}"');
            return { args, end: '}', line: this.#line };
          case '#':
            sharpComment = true;
            continue;
          case '\\':
            quoted = true;
            lastSpace = false;
            continue;
          case '"':
            start++;
            dQuoted = true;
            lastSpace = false;
            continue;
          case "'":
            start++;
            sQuoted = true;
            lastSpace = false;
            continue;
          case '$':
            variable = true;
            lastSpace = false;
            continue;
          default:
            lastSpace = false;
        }
        continue;
      }

      // inside a word: `${` does not open a block
      if (ch === '{' && variable) continue;
      variable = false;
      if (ch === '\\') {
        quoted = true;
        continue;
      }
      if (ch === '$') {
        variable = true;
        continue;
      }
      let found = false;
      if (dQuoted) {
        if (ch === '"') {
          dQuoted = false;
          needSpace = true;
          found = true;
        }
      } else if (sQuoted) {
        if (ch === "'") {
          sQuoted = false;
          needSpace = true;
          found = true;
        }
      } else if (isSpace(ch) || ch === ';' || ch === '{') {
        lastSpace = true;
        found = true;
      }
      if (found) {
        args.push(unescapeWord(text.slice(start, this.#pos - 1)));
        if (ch === ';' || ch === '{') return { args, end: ch, line: this.#line };
      }
    }
  }

  #error(text: string): ConfigError {
    return new ConfigError(text, this.#file, this.#line);
  }
}

/** nginx keeps a backslash unless it escapes `"`, `'`, `\`, or spells `\t`, `\r`, `\n`. */
function unescapeWord(raw: string): string {
  if (!raw.includes('\\')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\\') {
      const next = raw[i + 1];
      if (next === '"' || next === "'" || next === '\\') {
        out += next;
        i++;
        continue;
      }
      const control = next === 't' ? '\t' : next === 'r' ? '\r' : next === 'n' ? '\n' : null;
      if (control !== null) {
        out += control;
        i++;
        continue;
      }
    }
    out += ch;
  }
  return out;
}

/** All statements of a text up to the end of file (for tests and tools). */
export function tokenize(text: string, file: string): Statement[] {
  const tokenizer = new Tokenizer(text, file);
  const statements: Statement[] = [];
  for (;;) {
    const statement = tokenizer.next();
    statements.push(statement);
    if (statement.end === 'eof') return statements;
  }
}
