/**
 * `docs/api.md`, rendered from `api-spec/openapi.yaml` (`npm run docs:api`); a test fails when the
 * file and the spec disagree.
 */
import type { ApiSpec } from './spec.ts';

type Doc = Record<string, unknown>;

export function renderApiMarkdown(spec: ApiSpec): string {
  const doc = spec.document as Doc;
  const info = (doc.info ?? {}) as { title?: string; version?: string; description?: string };
  const paths = (doc.paths ?? {}) as Record<string, Doc>;
  const lines: string[] = [
    `# ${info.title ?? 'API'} (${info.version ?? ''})`,
    '',
    '<!-- Generated from api-spec/openapi.yaml by `npm run docs:api`; edit the spec, not this file. -->',
    '',
    (info.description ?? '').trim(),
    '',
    '## Endpoints',
    '',
    '| method | path | API ≥ | what |',
    '| --- | --- | --- | --- |',
  ];
  for (const op of spec.operations) {
    const summary = String(operationDoc(paths, op.path, op.method).summary ?? '').replace(/\|/g, '\\|');
    const path = paths[op.path]?.['x-trailing-slash'] === true ? `${op.path}[/]` : op.path;
    lines.push(`| ${op.method} | \`${path}\` | ${op.versioned ? op.minVersion : '–'} | ${summary} |`);
  }
  lines.push('', '## Operations', '');
  for (const op of spec.operations) {
    const item = operationDoc(paths, op.path, op.method);
    lines.push(`### \`${op.method} ${op.path}\` — ${op.operationId}`, '');
    if (item.summary) lines.push(String(item.summary), '');
    const params = [...asList(paths[op.path]?.parameters), ...asList(item.parameters)].map((p) =>
      deref(doc, p),
    );
    if (params.length > 0) {
      lines.push('Parameters:', '');
      for (const p of params) {
        const description = String(p.description ?? '').replace(/\n/g, ' ');
        lines.push(`- \`${String(p.name)}\` (${String(p.in)})${description ? `: ${description}` : ''}`);
      }
      lines.push('');
    }
    lines.push('Responses:', '');
    for (const [code, value] of Object.entries((item.responses ?? {}) as Record<string, unknown>)) {
      const response = deref(doc, value);
      lines.push(`- ${code}: ${String(response.description ?? '').replace(/\n/g, ' ')}`);
    }
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

function operationDoc(paths: Record<string, Doc>, path: string, method: string): Doc {
  return (paths[path]?.[method.toLowerCase()] ?? {}) as Doc;
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function deref(doc: Doc, node: unknown): Doc {
  const ref = (node as { $ref?: unknown } | null)?.$ref;
  if (typeof ref !== 'string') return (node ?? {}) as Doc;
  let target: unknown = doc;
  for (const part of ref.slice(2).split('/')) target = (target as Doc | undefined)?.[part];
  return deref(doc, target);
}
