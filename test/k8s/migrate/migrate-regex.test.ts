/**
 * `migrate` of ingress-nginx's regex paths and `rewrite-target`: Ingress → render and Ingress → migrate →
 * render, each run by a replica in front of one backend, answer the same requests alike (statuses, the
 * URI the backend receives, the limit); the objects validate against the Gateway API schemas, and what a
 * Gateway API object cannot say is named in a warning.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { parseAllDocuments, stringify } from 'yaml';
import { migrate } from '../../../src/cli/migrate-command.ts';
import { render } from '../../../src/cli/render-command.ts';
import type { Ingress } from '../../../src/k8s/objects.ts';
import type { Replica } from '../../../src/replica/replica.ts';
import { gatewayApiSchemaError } from '../../helpers/gateway-api-schemas.ts';
import { startInProcessReplica } from '../../helpers/in-process-replica.ts';
import { TempDir } from '../../helpers/limitswitch-process.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from '../../replica/http/harness.ts';
import { endpointSlice, ingress, service } from '../builders.ts';

const ING = 'nginx.ingress.kubernetes.io/';
const dir = new TempDir();
let backend: TestUpstream;
const replicas: Replica[] = [];

before(async () => {
  backend = await startUpstream();
});
after(async () => {
  await Promise.all(replicas.map((r) => r.close()));
  await backend?.close();
  dir.remove();
});

function yamlOf(objects: readonly object[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

/** The backend's Service and its one endpoint: the test's upstream. */
function cluster(): object[] {
  return [
    service('users', [{ port: 8080 }]),
    endpointSlice('users', [{ port: backend.port }], [{ ip: '127.0.0.1' }]),
  ];
}

function regexIngress(
  annotations: Record<string, string>,
  path: string,
  type = 'ImplementationSpecific',
): Ingress {
  return ingress('api', {
    annotations,
    rules: [{ host: 'api.example.com', paths: [{ path, type, svc: 'users', port: 8080 }] }],
  });
}

interface Both {
  readonly direct: number;
  readonly migrated: number;
  readonly warnings: readonly string[];
  readonly gatewayText: string;
}

/** Renders the Ingress directly and through migrate, and serves each with a replica. */
async function serveBoth(ing: Ingress, name: string): Promise<Both> {
  const source = dir.write(`${name}.yaml`, yamlOf([ing, ...cluster()]));
  const direct = render({ file: [source] });
  assert.equal(direct.exitCode, 0, direct.messages.join('\n'));
  const migrated = migrate({ file: [source] });
  assert.equal(migrated.exitCode, 0, migrated.messages.join('\n'));
  for (const doc of parseAllDocuments(migrated.text)) {
    const o = doc.toJS() as { kind?: string; apiVersion?: string };
    assert.equal(gatewayApiSchemaError(o), null, `${o.kind}`);
  }
  const back = render({
    file: [dir.write(`${name}-gateway.yaml`, `${migrated.text}---\n${yamlOf(cluster())}`)],
  });
  assert.equal(back.exitCode, 0, back.messages.join('\n'));
  const [a, b] = await Promise.all([
    startInProcessReplica(`${name}-direct`, direct.text),
    startInProcessReplica(`${name}-migrated`, back.text),
  ]);
  replicas.push(a.replica, b.replica);
  return { direct: a.port, migrated: b.port, warnings: migrated.messages, gatewayText: migrated.text };
}

async function ask(port: number, target: string): Promise<[number, string | null]> {
  const res = await request(`http://127.0.0.1:${port}${target}`, { headers: { host: 'api.example.com' } });
  const text = await res.body.text();
  return [res.statusCode, res.statusCode === 200 ? (JSON.parse(text) as UpstreamRecord).url : null];
}

async function answers(both: Both, targets: readonly string[]) {
  const direct: [number, string | null][] = [];
  const migrated: [number, string | null][] = [];
  for (const t of targets) {
    direct.push(await ask(both.direct, t));
    migrated.push(await ask(both.migrated, t));
  }
  return { direct, migrated };
}

describe('migrate: ingress-nginx regex paths and rewrite-target', () => {
  it('the prefix-stripping idiom becomes PathPrefix + ReplacePrefixMatch, answering and limiting alike', async () => {
    const both = await serveBoth(
      regexIngress(
        {
          [`${ING}use-regex`]: 'true',
          [`${ING}rewrite-target`]: '/$2',
          [`${ING}limit-rpm`]: '1',
          [`${ING}limit-burst-multiplier`]: '4',
        },
        '/v1(/|$)(.*)',
      ),
      'idiom',
    );
    assert.match(both.gatewayText, /type: PathPrefix\n\s+value: \/v1\n/);
    assert.match(both.gatewayText, /type: ReplacePrefixMatch\n\s+replacePrefixMatch: \//);
    assert.ok(
      both.warnings.some((w) => w.includes('matched case-sensitively')),
      both.warnings.join('\n'),
    );
    const targets = ['/v1/users', '/v1', '/v1/', '/v1/users?page=2', '/v1users', '/v1/users', '/v1/users'];
    const { direct, migrated } = await answers(both, targets);
    assert.deepEqual(migrated, direct);
    assert.deepEqual(direct, [
      [200, '/users'],
      [200, '/'],
      [200, '/'],
      [200, '/users?page=2'],
      [404, null],
      [200, '/users'],
      [503, null],
    ]);
  });

  it('another regex path becomes a case-insensitive RegularExpression anchored at the start', async () => {
    const both = await serveBoth(regexIngress({ [`${ING}use-regex`]: 'true' }, '/api/v[0-9]+'), 'regex');
    assert.match(both.gatewayText, /type: RegularExpression\n\s+value: \(\?i:\/api\/v\[0-9\]\+\)\.\*/);
    const { direct, migrated } = await answers(both, ['/api/v2/items', '/API/V10', '/api/vx', '/x/api/v2']);
    assert.deepEqual(migrated, direct);
    assert.deepEqual(direct, [
      [200, '/api/v2/items'],
      [200, '/API/V10'],
      [404, null],
      [404, null],
    ]);
  });

  it('a rewrite-target without captures becomes ReplaceFullPath (nginx replaces the whole path)', async () => {
    const both = await serveBoth(regexIngress({ [`${ING}rewrite-target`]: '/' }, '/foo', 'Prefix'), 'full');
    assert.match(both.gatewayText, /type: ReplaceFullPath\n\s+replaceFullPath: \//);
    const { direct, migrated } = await answers(both, ['/foo/bar?q=1', '/FOO', '/foobar', '/bar']);
    assert.deepEqual(migrated, direct);
    assert.deepEqual(direct, [
      [200, '/?q=1'],
      [200, '/'],
      [200, '/'],
      [404, null],
    ]);
  });

  it('a capture rewrite without a Gateway API equivalent is named in a warning', () => {
    const source = dir.write(
      'captures.yaml',
      yamlOf([
        regexIngress({ [`${ING}rewrite-target`]: '/$1/x', [`${ING}use-regex`]: 'true' }, '/(.*)/old'),
        ...cluster(),
      ]),
    );
    const out = migrate({ file: [source] });
    assert.equal(out.exitCode, 0);
    assert.ok(
      out.messages.some((m) => m.includes('rewrite-target "/$1/x" uses captures, which a URLRewrite cannot')),
      out.messages.join('\n'),
    );
  });
});
