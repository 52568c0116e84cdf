/**
 * Serving files (ngx_http_core_module's `root`, `alias`, `types`, `default_type`; the index
 * module's `index`): what a location that neither proxies nor returns answers from disk. Relative
 * paths are read against the conf prefix, as the configuration's other files are. Paths with
 * variables are refused; index names with variables are evaluated per request, as nginx does.
 */
import type { StaticFilesBuilder } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, flagArg, levelOf } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

function filesOf(scope: Scope): StaticFilesBuilder {
  return levelOf(scope).files;
}

function noVariables(d: Directive, value: string): void {
  if (value.includes('$')) throw configError(`variables in "${d.name}" are not supported`, d);
}

/** `root path` / `alias path` (ngx_http_core_root): one of them per level. */
function documentRoot(d: Directive, scope: Scope): void {
  const files = filesOf(scope);
  const alias = d.name === 'alias';
  const earlier = files.documentRoot;
  if (earlier !== undefined) {
    if ((earlier.alias !== null) === alias) throw duplicate(d);
    throw configError(
      `"${d.name}" directive is duplicate, "${earlier.alias !== null ? 'alias' : 'root'}" directive was specified earlier`,
      d,
    );
  }
  const location = scope.location;
  if (alias && location?.named === true)
    throw configError('the "alias" directive cannot be used inside the named location', d);
  let path = d.args[0]!;
  for (const name of ['document_root', 'realpath_root']) {
    if (path.includes(`$${name}`) || path.includes(`\${${name}}`))
      throw configError(`the $${name} variable cannot be used in the "${d.name}" directive`, d);
  }
  noVariables(d, path);
  if (!alias && path.endsWith('/')) path = path.slice(0, -1);
  const full = scope.session.fullPath(path);
  // ngx_conf_full_name of "" is the prefix itself; of "/" (root) stays ""
  files.documentRoot = {
    path: path === '' && !alias ? '' : full,
    alias: !alias ? null : location?.regex ? 'whole' : location!.pattern.length,
  };
}

/** `index file …` (ngx_http_index_set_index): only the last may be an absolute path. */
function index(d: Directive, scope: Scope): void {
  const files = filesOf(scope);
  files.index ??= [];
  d.args.forEach((name, i) => {
    if (name === '') throw configError(`index "" in "index" directive is invalid`, d);
    if (name.startsWith('/') && i !== d.args.length - 1)
      throw configError(`only the last index in "index" directive should be absolute`, d);
    files.index!.push(name);
  });
}

function defaultType(d: Directive, scope: Scope): void {
  const files = filesOf(scope);
  if (files.defaultType !== undefined) throw duplicate(d);
  files.defaultType = d.args[0]!;
}

/** `types { mime/type ext …; }` (ngx_http_core_type): a later extension wins, with nginx's warning. */
function types(d: Directive, scope: Scope): void {
  const files = filesOf(scope);
  files.types ??= new Map();
  const map = files.types;
  for (const line of d.block ?? []) {
    if (line.block) throw configError('unexpected "{"', line);
    for (const raw of line.args) {
      const ext = raw.toLowerCase();
      const old = map.get(ext);
      if (old !== undefined) {
        const text = `duplicate extension "${ext}", content type: "${line.name}", previous content type: "${old}"`;
        scope.session.warn(text, { file: line.file, line: line.line });
      }
      map.set(ext, line.name);
    }
  }
  scope.session.blockEnd(d);
}

/** `autoindex off` is nginx's default; a directory listing is refused rather than answered 403. */
function autoindex(d: Directive): void {
  if (!flagArg(d)) return;
  throw configError('"autoindex on" is not supported by limitswitch', d);
}

/** `etag on` is nginx's default and what the replica sends; without ETags, answers would differ. */
function etag(d: Directive): void {
  if (flagArg(d)) return;
  throw configError('"etag off" is not supported by limitswitch (only "on", the default)', d);
}

const HSL = ['http', 'server', 'location'] as const;

export const staticFilesDirectives: readonly DirectiveSpec[] = [
  { name: 'root', contexts: HSL, args: [1], handle: documentRoot },
  { name: 'alias', contexts: ['location'], args: [1], handle: documentRoot },
  { name: 'index', contexts: HSL, args: '1+', handle: index },
  { name: 'default_type', contexts: HSL, args: [1], handle: defaultType },
  { name: 'types', contexts: HSL, block: true, args: [0], handle: types },
  { name: 'autoindex', contexts: HSL, args: [1], handle: autoindex },
  { name: 'etag', contexts: HSL, args: [1], handle: etag },
];
