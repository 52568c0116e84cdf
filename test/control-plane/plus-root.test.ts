import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadApiSpec } from '../../src/control-plane/spec.ts';
import { assertMatchesSpec, assertNginxError, buildApp } from './harness.ts';

describe('NGINX Plus API structure', () => {
  it('GET /api and /api/ list versions 1..9', async () => {
    const { app } = await buildApp();
    for (const url of ['/api', '/api/']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.body, '[1,2,3,4,5,6,7,8,9]');
      assertMatchesSpec('getApiVersions', res);
    }
  });

  it('every version answers its root and http lists, which follow the version history', async () => {
    const { app } = await buildApp();
    const roots: Record<number, string> = {};
    const https: Record<number, string> = {};
    for (let v = 1; v <= 9; v += 1) {
      const root = await app.inject({ method: 'GET', url: `/api/${v}/` });
      const http = await app.inject({ method: 'GET', url: `/api/${v}/http` });
      assert.equal(root.statusCode, 200);
      assert.equal(http.statusCode, 200);
      assertMatchesSpec('getApiRoot', root);
      roots[v] = root.body;
      https[v] = http.body;
    }
    assert.equal(roots[4], '["nginx","processes","connections","slabs","http","ssl"]');
    assert.equal(roots[8], '["nginx","processes","connections","slabs","http","resolvers","ssl"]');
    assert.equal(roots[9], '["nginx","processes","connections","slabs","http","resolvers","ssl","workers"]');
    assert.equal(https[5], '["requests","server_zones","location_zones","caches","upstreams","keyvals"]');
    assert.equal(
      https[9],
      '["requests","server_zones","location_zones","caches","upstreams","limit_conns","limit_reqs","keyvals"]',
    );
  });

  it('/api/N/nginx names limitswitch; fields selects', async () => {
    const { app } = await buildApp({ version: '1.2.3' });
    const res = await app.inject({ method: 'GET', url: '/api/9/nginx' });
    assertMatchesSpec('getNginx', res);
    const body = JSON.parse(res.body);
    assert.equal(body.version, '1.2.3');
    assert.equal(body.build, 'limitswitch-1.2.3');
    assert.equal(body.pid, process.pid);
    const some = await app.inject({ method: 'GET', url: '/api/9/nginx?fields=version,build' });
    assert.equal(some.body, '{"version":"1.2.3","build":"limitswitch-1.2.3"}');
  });

  it('unknown versions, paths and methods answer in NGINX’s shape; v1–3 bodies carry empty path/method', async () => {
    const { app } = await buildApp();
    for (const url of ['/api/0/', '/api/10/', '/api/09/nginx', '/api/x/http/keyvals', '/api/10/nope']) {
      assertNginxError(await app.inject({ method: 'GET', url }), 404, 'UnknownVersion', 'unknown version');
    }
    for (const url of ['/api/9/nope', '/api/9/http/nope/', '/nope', '/api/9/http/keyvals/a/b']) {
      assertNginxError(await app.inject({ method: 'GET', url }), 404, 'PathNotFound', 'path not found');
    }
    assertNginxError(
      await app.inject({ method: 'POST', url: '/api/9/nginx' }),
      405,
      'MethodNotSupported',
      'method not supported',
    );
    assertNginxError(
      await app.inject({ method: 'PUT', url: '/api/9/http/keyvals/zone_one' }),
      405,
      'MethodNotSupported',
    );

    const old = await app.inject({ method: 'GET', url: '/api/3/http/keyvals/nope' });
    assertNginxError(old, 404, 'KeyvalNotFound');
    const body = JSON.parse(old.body);
    assert.equal(body.path, '');
    assert.equal(body.method, '');
    const current = JSON.parse((await app.inject({ method: 'GET', url: '/api/4/http/keyvals/nope' })).body);
    assert.equal('path' in current, false);
    assert.equal('method' in current, false);
  });

  it('every endpoint the exporter asks for is well-formed (workers is an array)', async () => {
    const { app } = await buildApp();
    const spec = loadApiSpec();
    const exporterOps = spec.operations.filter((op) =>
      (spec.document.paths as Record<string, Record<string, { tags?: string[] }>>)[
        op.path
      ]?.get?.tags?.includes('exporter'),
    );
    assert.ok(exporterOps.length >= 15);
    for (const op of exporterOps) {
      const url = op.routePaths[0]!.replace(':version', '8');
      const version = op.minVersion > 8 ? 9 : 8;
      const res = await app.inject({ method: 'GET', url: url.replace('/api/8/', `/api/${version}/`) });
      assert.equal(res.statusCode, 200, url);
      assertMatchesSpec(op.operationId, res);
    }
    assert.equal((await app.inject({ method: 'GET', url: '/api/9/workers' })).body, '[]');
  });
});
