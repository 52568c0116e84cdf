/**
 * `limitswitch migrate`: for every rate-limit annotation of the docs' tables (NIC's and ingress-nginx's,
 * and the ConfigMap keys that change them), Ingress → migrate → render limits as rendering the Ingress
 * directly does (the same zones' keys, rates, sizes, bursts, delays, sync, and the same status, log
 * level and dry run in each location); the output validates against the CRD schemas (and NGF's CEL
 * rules); what cannot be carried over is named; invalid values are errors with exit code 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { migrate } from '../../../src/cli/migrate-command.ts';
import { render } from '../../../src/cli/render-command.ts';
import { decideRequest } from '../../../src/cli/simulate.ts';
import { buildSite } from '../../../src/config/build-site.ts';
import { loadConfigText } from '../../../src/config/index.ts';
import { ANNOTATION_IDS, ANNOTATIONS } from '../../../src/k8s/translate/annotations.ts';
import { ClusterTranslator } from '../../../src/k8s/translate/cluster-translator.ts';
import { readYamlObjects } from '../../../src/k8s/yaml-objects.ts';
import { gatewayApiSchemaError } from '../../helpers/gateway-api-schemas.ts';
import { TempDir } from '../../helpers/limitswitch-process.ts';
import { TestPki } from '../../helpers/tls-certs.ts';
import { tlsSecret } from '../builders.ts';

const dir = new TempDir();
after(() => dir.remove());

const SERVICE = `apiVersion: v1
kind: Service
metadata: { name: coffee-svc, namespace: default }
spec: { ports: [{ name: http, port: 80 }] }
`;

function ingressYaml(annotations: Record<string, string>, extra = ''): string {
  const lines = Object.entries(annotations).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`);
  return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: coffee
  namespace: default
  annotations:
${lines.join('\n') || '    {}'}
spec:
  ingressClassName: limitswitch
  rules:
    - host: cafe.example.com
      http:
        paths:
          - path: /coffee
            pathType: Prefix
            backend: { service: { name: coffee-svc, port: { number: 80 } } }
          - path: /latte
            pathType: Exact
            backend: { service: { name: coffee-svc, port: { name: http } } }
${extra}`;
}

function configMapYaml(data: Record<string, string>): string {
  const lines = Object.entries(data).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`);
  return `---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: limitswitch-config, namespace: limitswitch }\ndata:\n${lines.join('\n')}\n`;
}

const BYTES: Record<string, number> = { '': 1, k: 1024, m: 1 << 20 };
const bytes = (size: string) => {
  const m = /^(\d+)([km]?)$/i.exec(size)!;
  return Number(m[1]) * BYTES[m[2]!.toLowerCase()]!;
};

/**
 * Per location path (`/coffee`, `= /coffee` and `/coffee/` alike), the limits a request meets: each
 * zone's key (through the maps that gate it), rate, size and sync, the limit_req parameters, and the
 * location's status, log level and dry run (with the http level's and nginx's defaults).
 */
function effectiveLimits(text: string): Map<string, string[]> {
  const lines = text.split('\n').map((l) => l.trim());
  const mapValue = new Map<string, string>();
  const zones = new Map<string, string>();
  let httpStatus = '503';
  let depth = 0;
  let mapVar: string | null = null;
  let location: { path: string; limits: string[]; status?: string; log?: string; dry?: string } | null = null;
  const out = new Map<string, string[]>();
  const unquote = (s: string) => s.replace(/^"(.*)"$/, '$1');
  const resolve = (key: string): string => {
    const plain = key.replace(/\$\{(\w+)\}/g, '$$$1');
    return mapValue.has(plain) ? resolve(mapValue.get(plain)!) : plain;
  };
  for (const line of lines) {
    if (mapVar !== null) {
      if (line === '}') mapVar = null;
      else {
        const value = unquote(
          line
            .replace(/;(\s*#.*)?$/, '')
            .split(/\s+/)
            .at(-1)!,
        );
        if (value !== '' && !mapValue.has(mapVar)) mapValue.set(mapVar, value);
      }
      continue;
    }
    const map = /^map \S+ (\$\w+) \{$/.exec(line) ?? /^map "[^"]*" (\$\w+) \{$/.exec(line);
    if (map) {
      mapVar = map[1]!;
      continue;
    }
    const zone = /^limit_req_zone (\S+) zone=(\S+):(\S+) rate=(\S+?)( sync)?;$/.exec(line);
    if (zone)
      zones.set(
        zone[2]!,
        `key=${unquote(zone[1]!)} rate=${zone[4]} size=${bytes(zone[3]!)}${zone[5] ? ' sync' : ''}`,
      );
    if (depth === 1 && /^limit_req_status (\d+);$/.test(line)) httpStatus = line.split(/\s|;/)[1]!;
    const loc = /^location (?:= )?(\S+) \{$/.exec(line);
    if (loc) location = { path: loc[1]!.replace(/(.)\/$/, '$1'), limits: [] };
    if (location) {
      const lr = /^limit_req zone=(\S+?)((?: burst=\d+)?(?: nodelay)?(?: delay=\d+)?);$/.exec(line);
      if (lr) location.limits.push(`${lr[1]}${lr[2]}`);
      if (line.startsWith('limit_req_status ')) location.status = line.split(/\s|;/)[1]!;
      if (line.startsWith('limit_req_log_level ')) location.log = line.split(/\s|;/)[1]!;
      if (line.startsWith('limit_req_dry_run ')) location.dry = line.split(/\s|;/)[1]!;
    }
    if (line.endsWith('{')) depth++;
    if (line === '}') {
      depth--;
      if (location && depth === 2) {
        if (location.limits.length > 0) {
          const settings = `status=${location.status ?? httpStatus} log=${location.log ?? 'error'} dry=${location.dry ?? 'off'}`;
          const described = location.limits.map((l) => {
            const [name, ...params] = l.split(' ');
            return `${zones.get(name!)?.replace(/key=(\S+)/, (_, k: string) => `key=${resolve(k)}`)} ${params.join(' ')} ${settings}`;
          });
          const previous = out.get(location.path);
          assert.ok(
            previous === undefined || previous.join() === described.sort().join(),
            `${location.path}: = and prefix differ`,
          );
          out.set(location.path, described.sort());
        }
        location = null;
      }
    }
  }
  return out;
}

interface Row {
  readonly name: string;
  readonly annotations: Record<string, string>;
  readonly configMap?: Record<string, string>;
}

const NIC = 'nginx.org/';
const ING = 'nginx.ingress.kubernetes.io/';
const ROWS: readonly Row[] = [
  {
    name: 'NIC rate alone (defaults: key, 10m, 429, error)',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s' },
  },
  {
    name: 'NIC key',
    annotations: { [`${NIC}limit-req-rate`]: '5r/m', [`${NIC}limit-req-key`]: '${http_x_client}' },
  },
  {
    name: 'NIC zone size (1024k is 1m)',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s', [`${NIC}limit-req-zone-size`]: '1024k' },
  },
  {
    name: 'NIC burst and delay',
    annotations: {
      [`${NIC}limit-req-rate`]: '10r/s',
      [`${NIC}limit-req-burst`]: '5',
      [`${NIC}limit-req-delay`]: '2',
    },
  },
  {
    name: 'NIC burst and no-delay',
    annotations: {
      [`${NIC}limit-req-rate`]: '10r/s',
      [`${NIC}limit-req-burst`]: '3',
      [`${NIC}limit-req-no-delay`]: 'true',
    },
  },
  {
    name: 'NIC reject code',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s', [`${NIC}limit-req-reject-code`]: '503' },
  },
  {
    name: 'NIC dry run',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s', [`${NIC}limit-req-dry-run`]: 'true' },
  },
  {
    name: 'NIC log level',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s', [`${NIC}limit-req-log-level`]: 'warn' },
  },
  {
    name: 'NIC zone sync (annotation)',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s', 'limitswitch.io/zone-sync': 'true' },
  },
  {
    name: 'NIC zone sync (ConfigMap)',
    annotations: { [`${NIC}limit-req-rate`]: '10r/s' },
    configMap: { 'zone-sync': 'true' },
  },
  { name: 'ingress-nginx rps (burst × 5, nodelay, 5m)', annotations: { [`${ING}limit-rps`]: '5' } },
  { name: 'ingress-nginx rpm', annotations: { [`${ING}limit-rpm`]: '300' } },
  {
    name: 'ingress-nginx rps + rpm, multiplier',
    annotations: {
      [`${ING}limit-rps`]: '2',
      [`${ING}limit-rpm`]: '60',
      [`${ING}limit-burst-multiplier`]: '3',
    },
  },
  {
    name: 'ingress-nginx status code and key (ConfigMap)',
    annotations: { [`${ING}limit-rps`]: '5' },
    configMap: { 'limit-req-status-code': '429', 'limit-conn-zone-variable': '$http_x_client' },
  },
  {
    name: 'ingress-nginx zone sync',
    annotations: { [`${ING}limit-rps`]: '5', 'limitswitch.io/zone-sync': 'true' },
  },
];

function files(row: Row, name: string): string {
  return dir.write(
    `${name}.yaml`,
    `${ingressYaml(row.annotations)}---\n${SERVICE}${row.configMap ? configMapYaml(row.configMap) : ''}`,
  );
}

function objectsOf(yaml: string) {
  return parseAllDocuments(yaml).map(
    (d) => d.toJS() as { apiVersion: string; kind: string; spec?: Record<string, unknown> },
  );
}

describe('limitswitch migrate', () => {
  test('the table covers every rate-limit annotation of the docs (the annotation registry)', () => {
    const limitAnnotations = ANNOTATION_IDS.map((id) => ANNOTATIONS[id].name).filter(
      (n) => /limit-(req|rps|rpm|burst)/.test(n) || n === 'limitswitch.io/zone-sync',
    );
    const covered = new Set(ROWS.flatMap((r) => Object.keys(r.annotations)));
    // limit-req-scale and the allowlists cannot be carried over: their warnings are tested below
    const missing = limitAnnotations.filter(
      (n) => !covered.has(n) && !/limit-req-scale|allowlist|whitelist/.test(n),
    );
    assert.deepEqual(missing, []);
  });

  for (const [i, row] of ROWS.entries()) {
    test(`round trip: ${row.name}`, () => {
      const source = files(row, `row-${i}`);
      const direct = render({ file: [source] });
      assert.equal(direct.exitCode, 0, direct.messages.join('\n'));
      const migrated = migrate({ file: [source] });
      assert.equal(migrated.exitCode, 0, migrated.messages.join('\n'));
      const back = render({
        file: [
          dir.write(
            `row-${i}-gateway.yaml`,
            `${migrated.text}---\n${SERVICE}${row.configMap ? configMapYaml(row.configMap) : ''}`,
          ),
        ],
      });
      assert.equal(back.exitCode, 0, back.messages.join('\n'));
      const want = effectiveLimits(direct.text);
      assert.ok(want.size > 0, 'the Ingress is limited');
      const got = effectiveLimits(back.text);
      for (const [path, limits] of want) assert.deepEqual(got.get(path), limits, path);
      for (const o of objectsOf(migrated.text)) assert.equal(gatewayApiSchemaError(o), null, `${o.kind}`);
    });
  }

  test("the output keeps NGF's CEL rules (kinds, group, unique, not mixed; noDelay without delay)", () => {
    const out = migrate({
      file: [
        files(
          {
            name: 'cel',
            annotations: {
              [`${NIC}limit-req-rate`]: '1r/s',
              [`${NIC}limit-req-no-delay`]: 'true',
              [`${NIC}limit-req-delay`]: '3',
            },
          },
          'cel',
        ),
      ],
    });
    const policies = objectsOf(out.text).filter((o) => o.kind === 'RateLimitPolicy');
    assert.equal(policies.length, 1);
    const spec = policies[0]!.spec as {
      targetRefs: { group: string; kind: string; name: string }[];
      rateLimit: { local: { rules: { noDelay?: boolean; delay?: number }[] } };
    };
    const refs = spec.targetRefs;
    assert.ok(refs.length >= 1 && refs.length <= 16);
    assert.ok(
      refs.every(
        (t) =>
          ['Gateway', 'HTTPRoute', 'GRPCRoute'].includes(t.kind) && t.group === 'gateway.networking.k8s.io',
      ),
    );
    assert.equal(new Set(refs.map((t) => `${t.kind}/${t.name}`)).size, refs.length);
    assert.ok(!(refs.some((t) => t.kind === 'Gateway') && refs.some((t) => t.kind !== 'Gateway')));
    for (const r of spec.rateLimit.local.rules) assert.ok(!(r.noDelay === true && r.delay !== undefined));
    assert.ok(
      out.messages.some((m) => m.includes('limit-req-delay: ignored with nginx.org/limit-req-no-delay')),
    );
  });

  test('what cannot be carried over is named, one warning each; the rest still migrates (exit 0)', () => {
    const out = migrate({
      file: [
        files(
          {
            name: 'warn',
            annotations: {
              [`${NIC}limit-req-rate`]: '10r/s',
              [`${NIC}limit-req-scale`]: 'true',
              [`${ING}limit-allowlist`]: '10.0.0.0/8',
              [`${NIC}location-snippets`]: 'limit_req zone=x;',
              [`${ING}some-unknown`]: 'x',
            },
          },
          'warn',
        ),
      ],
    });
    assert.equal(out.exitCode, 0);
    for (const want of [
      'limit-req-scale: not carried over',
      'limit-allowlist: not carried over',
      'location-snippets: not carried over',
      'some-unknown: not carried over',
    ])
      assert.ok(
        out.messages.some(
          (m) => m.startsWith('limitswitch: [warning] Ingress default/coffee: ') && m.includes(want),
        ),
        want,
      );
    assert.ok(objectsOf(out.text).some((o) => o.kind === 'RateLimitPolicy'));
  });

  test('invalid values are errors, worded as render words them, and the exit code is 1', () => {
    const bad = migrate({
      file: [files({ name: 'bad', annotations: { [`${NIC}limit-req-rate`]: 'fast' } }, 'bad')],
    });
    assert.equal(bad.exitCode, 1);
    const rendered = render({
      file: [dir.write('bad.yaml', ingressYaml({ [`${NIC}limit-req-rate`]: 'fast' }))],
    });
    const error = bad.messages.find((m) => m.includes('[error]'))!;
    assert.ok(
      rendered.messages.some((m) => m.includes(error.split(': ').slice(2).join(': '))),
      `${error} / ${rendered.messages.join(' | ')}`,
    );
    const key = migrate({
      file: [
        files(
          {
            name: 'key',
            annotations: { [`${NIC}limit-req-rate`]: '1r/s', [`${NIC}limit-req-key`]: '${http_a}b' },
          },
          'key',
        ),
      ],
    });
    assert.equal(key.exitCode, 1);
    assert.ok(
      key.messages.some((m) => /limit-req-key: .* cannot be written as a RateLimitPolicy key/.test(m)),
    );
  });
});

describe('limitswitch migrate: TLS hosts', () => {
  test('an HTTPS listener with the Ingress’s Secret, and plain HTTP redirected (301 as NIC, 308 as ingress-nginx), as rendering the Ingress does', () => {
    const pki = new TestPki();
    try {
      const cert = pki.server('cafe', ['cafe.example.com']);
      const secret = stringify(
        tlsSecret('cafe-secret', { cert: pki.read(cert.cert), key: pki.read(cert.key) }),
      );
      const tls = '  tls:\n    - hosts: [cafe.example.com]\n      secretName: cafe-secret\n';
      for (const [annotations, code] of [
        [{ [`${NIC}limit-req-rate`]: '10r/s' }, 301],
        [{ [`${ING}limit-rps`]: '5', [`${ING}ssl-redirect`]: 'true' }, 308],
      ] as const) {
        const source = dir.write(
          `tls-${code}.yaml`,
          `${ingressYaml(annotations, tls)}---\n${SERVICE}---\n${secret}`,
        );
        const migrated = migrate({ file: [source] });
        assert.equal(migrated.exitCode, 0, migrated.messages.join('\n'));
        const objs = objectsOf(migrated.text);
        for (const o of objs) assert.equal(gatewayApiSchemaError(o), null, o.kind);
        const listeners = (
          objs.find((o) => o.kind === 'Gateway')!.spec as { listeners: { protocol: string; tls?: unknown }[] }
        ).listeners;
        assert.deepEqual(listeners.map((l) => l.protocol).sort(), ['HTTP', 'HTTPS']);
        const sites = [
          source,
          dir.write(`tls-${code}-gateway.yaml`, `${migrated.text}---\n${SERVICE}---\n${secret}`),
        ].map((file) => {
          const o = readYamlObjects(readFileSync(file, 'utf8'), file);
          const t = new ClusterTranslator().translate({ ...o, configMap: null, gateway: o });
          assert.deepEqual(
            t.problems.filter((p) => p.severity === 'error'),
            [],
          );
          return buildSite(loadConfigText(t.text, file, { files: t.files }).http);
        });
        for (const site of sites) {
          const { verdict } = decideRequest(
            site,
            { t: 1000, addr: '10.0.0.1', host: 'cafe.example.com', uri: '/coffee/x', port: 80 },
            80,
          );
          assert.ok(verdict.kind === 'return');
          assert.equal(`${verdict.code} ${verdict.text}`, `${code} https://cafe.example.com/coffee/x`);
        }
        assert.deepEqual(
          effectiveLimits(
            render({
              file: [dir.write(`tls-${code}-back.yaml`, `${migrated.text}---\n${SERVICE}---\n${secret}`)],
            }).text,
          ).get('/coffee'),
          effectiveLimits(render({ file: [source] }).text).get('/coffee'),
        );
      }
    } finally {
      pki.remove();
    }
  });
});
