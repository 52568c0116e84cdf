/**
 * The main context: `events { }` (read, its contents ignored), `http { }`, and `include` (expanded by
 * the parser; only malformed includes reach the table, which rejects them as nginx does).
 */
import { newHttp } from '../builders.ts';
import type { Directive } from '../directive.ts';
import { finishHttp } from '../finish.ts';
import { duplicate, ref } from './helpers.ts';
import type { ContextKind, DirectiveSpec, Scope } from './types.ts';

const ANY: readonly ContextKind[] = ['main', 'events', 'http', 'server', 'location', 'upstream'];

function events(d: Directive, scope: Scope): void {
  if (scope.main.events) throw duplicate(d);
  scope.main.events = true;
  scope.session.walkBlock(d, { ...scope, kind: 'events' });
}

function http(d: Directive, scope: Scope): void {
  if (scope.main.http) throw duplicate(d);
  const builder = newHttp(ref(d));
  // nginx's default `root html`, relative to the prefix
  builder.files.defaultRoot = scope.session.fullPath('html');
  scope.main.http = builder;
  const end = scope.session.walkBlock(d, { ...scope, kind: 'http', http: builder });
  finishHttp(builder, scope.session, { file: d.file, line: end });
}

export const coreDirectives: readonly DirectiveSpec[] = [
  { name: 'events', contexts: ['main'], block: true, args: [0], handle: events },
  { name: 'http', contexts: ['main'], block: true, args: [0], handle: http },
  { name: 'include', contexts: ANY, args: [1], handle: () => {} },
];
