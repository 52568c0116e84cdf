/**
 * Structural check of a snippet before it is pasted into generated config: it must be a sequence of
 * complete statements whose blocks open and close inside the snippet. Without this a
 * `location-snippets` value such as `} server { ... ` could escape its location and rewrite another
 * Ingress's server — the combined text would still parse. Tokenizes like nginx's
 * `ngx_conf_read_token`: quotes with backslash escapes, `#` comments at token start, `${var}`.
 */

/** Returns null when the snippet is well formed, else what is wrong (with the snippet's line). */
export function checkSnippet(text: string): string | null {
  let depth = 0;
  let line = 1;
  /** Tokens since the last `;`, `{` or `}`: a statement still waiting for its terminator. */
  let pending = false;
  let pendingLine = 1;
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\n') {
      line++;
      i++;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (ch === ';') {
      if (!pending) return `unexpected ";" on line ${line}`;
      pending = false;
      i++;
      continue;
    }
    if (ch === '{') {
      if (!pending) return `unexpected "{" on line ${line}`;
      pending = false;
      depth++;
      i++;
      continue;
    }
    if (ch === '}') {
      if (pending) return `unexpected "}" on line ${line}, expecting ";"`;
      if (depth === 0)
        return `unexpected "}" on line ${line}: a snippet cannot close the block it is placed in`;
      depth--;
      i++;
      continue;
    }
    const starts = !pending;
    if (starts) pendingLine = line;
    pending = true;
    if (ch === '"' || ch === "'") {
      const start = line;
      i++;
      while (i < text.length && text[i] !== ch) {
        if (text[i] === '\\') i++;
        else if (text[i] === '\n') line++;
        i++;
      }
      if (i >= text.length) return `unterminated quoted string starting on line ${start}`;
      i++;
      continue;
    }
    // An unquoted token runs to whitespace or a special character; `${name}` stays inside it.
    const tokenStart = i;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '$' && text[i + 1] === '{') {
        const end = text.indexOf('}', i + 2);
        if (end === -1) return `unterminated "\${" on line ${line}`;
        i = end + 1;
        continue;
      }
      if (' \t\r\n;{}'.includes(c)) break; // a quote inside a token is an ordinary character
      if (c === '\\') i++;
      i++;
    }
    // `include` would read files of the replica's filesystem into the config.
    if (starts && text.slice(tokenStart, i) === 'include')
      return `"include" is not allowed in a snippet (line ${line})`;
  }
  if (pending) return `unexpected end of snippet, expecting ";" after the statement on line ${pendingLine}`;
  if (depth > 0) return 'unexpected end of snippet, expecting "}"';
  return null;
}
