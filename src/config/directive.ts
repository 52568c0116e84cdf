/**
 * The directive tree: what the parser makes of nginx.conf text before any directive is interpreted.
 * `include` is already expanded; every node keeps the file and line nginx would report for it.
 */

/** One directive: `name args… ;` or `name args… { block }`. */
export interface Directive {
  readonly name: string;
  readonly args: readonly string[];
  readonly file: string;
  /** The line of the `;` or `{` that ended the directive (nginx reports errors there). */
  readonly line: number;
  /** Children of a block directive, `null` for a simple one. */
  readonly block: readonly Directive[] | null;
  /** The line of the closing `}` of a block; 0 for simple directives and blocks left open by an error. */
  readonly endLine: number;
}

/** The contexts a snippet can be written for. */
export type SnippetContext = 'http' | 'server' | 'location';
