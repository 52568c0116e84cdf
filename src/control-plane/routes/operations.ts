/**
 * Operating the control plane: `/metrics`, `/healthz` (the process answers), `/readyz` (the store
 * answers) and `/docs` (the OpenAPI document as JSON, as written, and a minimal HTML index of it).
 */
import type { FastifyInstance } from 'fastify';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import type { ApiSpec } from '../spec.ts';

export function operationsRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getMetrics', async (_request, reply) =>
    reply.type(ctx.metrics.contentType).send(await ctx.metrics.text()),
  );

  addSpecRoute(app, ctx, 'getHealthz', async () => ({ status: 'ok' }));

  // A control plane is ready while the store answers (it cannot serve without it); a replica while it
  // enforces a loaded state — from the store or, fail-static, its state file — and says which.
  addSpecRoute(app, ctx, 'getReadyz', async () => {
    const revision = await ctx.gateway.revision();
    if (ctx.storeLink === null) return { status: 'ready', revision };
    const { connected, source, lastError } = ctx.storeLink();
    return { status: 'ready', revision, connected, source, lastError };
  });

  addSpecRoute(app, ctx, 'getDocsJson', async () => ctx.spec.document);
  addSpecRoute(app, ctx, 'getDocsYaml', async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(ctx.spec.yamlText),
  );
  const html = docsPage(ctx.spec);
  addSpecRoute(app, ctx, 'getDocs', async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(html),
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One table of every operation, from the spec; no scripts, no external assets. */
function docsPage(spec: ApiSpec): string {
  const info = (spec.document.info ?? {}) as { title?: string; version?: string };
  const paths = (spec.document.paths ?? {}) as Record<string, Record<string, { summary?: string }>>;
  const rows = spec.operations
    .map((op) => {
      const summary = paths[op.path]?.[op.method.toLowerCase()]?.summary ?? '';
      const since = op.minVersion > 1 ? ` (API ≥ ${op.minVersion})` : '';
      return `<tr><td>${op.method}</td><td><code>${escapeHtml(op.path)}</code></td><td>${escapeHtml(summary)}${since}</td></tr>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title ?? 'API')}</title>
<style>body{font-family:sans-serif;margin:2em}td{padding:.2em .8em;vertical-align:top}code{white-space:nowrap}</style>
</head><body>
<h1>${escapeHtml(info.title ?? 'API')} ${escapeHtml(info.version ?? '')}</h1>
<p>The full document: <a href="/docs/openapi.json">openapi.json</a> · <a href="/docs/openapi.yaml">openapi.yaml</a></p>
<table><thead><tr><th>method</th><th>path</th><th>what</th></tr></thead><tbody>
${rows}
</tbody></table>
</body></html>
`;
}
