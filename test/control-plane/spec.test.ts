import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import { parse } from 'yaml';
import { renderApiMarkdown } from '../../src/control-plane/api-docs.ts';
import { controlPlane } from '../../src/control-plane/app.ts';
import { loadApiSpec, parseApiSpec } from '../../src/control-plane/spec.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { buildApp } from './harness.ts';

describe('api-spec/openapi.yaml is the one schema', () => {
  it('every route in the spec is served, and nothing else', async () => {
    const app = Fastify({ logger: false });
    const served: string[] = [];
    app.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) if (method !== 'HEAD') served.push(`${method} ${route.url}`);
    });
    await app.register(controlPlane, { store: openMemoryStore() });
    await app.ready();
    const spec = loadApiSpec();
    const expected = spec.operations.flatMap((op) => op.routePaths.map((path) => `${op.method} ${path}`));
    assert.deepEqual([...served].sort(), [...expected].sort());
    assert.equal(new Set(expected).size, expected.length);
    assert.ok(expected.length > 60);
  });

  it('routes take their schemas from the spec (a body outside the schema is refused)', () => {
    const post = loadApiSpec().operation('postHttpKeyvalZone');
    assert.equal(post.write, true);
    assert.deepEqual(post.schema.body?.type, 'object');
    assert.deepEqual(post.schema.querystring?.properties, {
      wait: { type: 'string', enum: ['applied'] },
      timeout: { type: 'string', pattern: '^[0-9]{1,6}(ms|s|m)?$' },
    });
  });

  it("every write documents the refusals of writes not from the API's own clients (403, 415, 421)", () => {
    const spec = loadApiSpec();
    const paths = spec.document.paths as Record<string, Record<string, { responses: object }>>;
    const writes = spec.operations.filter((op) => op.method !== 'GET');
    assert.ok(writes.length >= 6);
    for (const op of writes) {
      const codes = Object.keys(paths[op.path]![op.method.toLowerCase()]!.responses);
      for (const code of ['403', '415', '421']) assert.ok(codes.includes(code), `${op.operationId}: ${code}`);
    }
  });

  it('the loader refuses a spec with a missing operationId or a dangling $ref', () => {
    assert.throws(() => parseApiSpec('paths:\n  /x:\n    get:\n      responses: {}\n'), {
      message: 'GET /x has no operationId',
    });
    const dangling =
      'paths:\n  /x:\n    get:\n      operationId: x\n      responses:\n        "200": { $ref: "#/components/responses/Nope" }\n';
    assert.throws(() => parseApiSpec(dangling), { message: 'unresolved $ref #/components/responses/Nope' });
  });

  it('/docs serves the spec as JSON, as written, and as an HTML index of every path', async () => {
    const { app } = await buildApp();
    const yamlText = readFileSync(new URL('../../api-spec/openapi.yaml', import.meta.url), 'utf8');
    const json = await app.inject({ method: 'GET', url: '/docs/openapi.json' });
    assert.deepEqual(JSON.parse(json.body), parse(yamlText));
    const raw = await app.inject({ method: 'GET', url: '/docs/openapi.yaml' });
    assert.equal(raw.body, yamlText);
    assert.match(String(raw.headers['content-type']), /^application\/yaml/);
    const html = await app.inject({ method: 'GET', url: '/docs' });
    assert.match(String(html.headers['content-type']), /^text\/html/);
    for (const op of loadApiSpec().operations)
      assert.ok(html.body.includes(`<code>${op.path}</code>`), op.path);
  });

  it('docs/api.md is generated from the spec (run `npm run docs:api` after changing it)', () => {
    const onDisk = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    assert.equal(onDisk, renderApiMarkdown(loadApiSpec()));
  });
});
