import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Ingress } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import { rateLimitId } from '../../src/k8s/translate/limit-req-ingress-nginx.ts';
import { configMap, ingress, locationBlock, NIC_PROXY_HEADERS, serverBlock } from './builders.ts';

function translate(
  ingresses: Ingress[],
  replicas: number | null = null,
  data: Record<string, string> | null = null,
) {
  return new ClusterTranslator().translate({
    ingresses,
    services: [],
    endpointSlices: [],
    configMap: data ? configMap('limitswitch-config', data) : null,
    replicas,
  });
}

const cafe = (name: string, annotations: Record<string, string>, paths = ['/tea', '/coffee'], created = 0) =>
  ingress(name, {
    annotations,
    created,
    rules: [{ host: 'cafe.example.com', paths: paths.map((p) => ({ path: p, svc: 'tea-svc', port: 80 })) }],
  });

describe('nginx.org/limit-req-* (NIC)', () => {
  it('one zone per Ingress and the limit lines NIC writes in every location', () => {
    const { text, problems } = translate([
      cafe('cafe', {
        'nginx.org/limit-req-rate': '10r/s',
        'nginx.org/limit-req-burst': '20',
        'nginx.org/limit-req-delay': '5',
        'nginx.org/limit-req-dry-run': 'true',
        'nginx.org/limit-req-log-level': 'warn',
      }),
    ]);
    assert.deepEqual(problems, []);
    assert.match(
      text,
      /\n {4}# Ingress default\/cafe\n {4}limit_req_zone \$\{binary_remote_addr\} zone=default\/cafe:10m rate=10r\/s;\n/,
    );
    for (const path of ['/tea', '/coffee']) {
      assert.deepEqual(locationBlock(text, `location ${path}`), [
        ...NIC_PROXY_HEADERS,
        `proxy_pass http://default-cafe-cafe.example.com-tea-svc-80;`,
        'limit_req zone=default/cafe burst=20 delay=5;',
        'limit_req_dry_run on;',
        'limit_req_log_level warn;',
        'limit_req_status 429;',
      ]);
    }
  });

  it('no-delay wins over delay; key, size and reject code are used as given', () => {
    const { text } = translate([
      cafe(
        'cafe',
        {
          'nginx.org/limit-req-rate': '600r/m',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not templates
          'nginx.org/limit-req-key': '${http_x_api_key}',
          'nginx.org/limit-req-zone-size': '1m',
          'nginx.org/limit-req-delay': '5',
          'nginx.org/limit-req-no-delay': 'true',
          'nginx.org/limit-req-reject-code': '503',
        },
        ['/tea'],
      ),
    ]);
    assert.match(text, /limit_req_zone \$\{http_x_api_key\} zone=default\/cafe:1m rate=600r\/m;/);
    assert.deepEqual(locationBlock(text, 'location /tea')?.slice(1 + NIC_PROXY_HEADERS.length), [
      'limit_req zone=default/cafe nodelay;',
      'limit_req_log_level error;',
      'limit_req_status 503;',
    ]);
  });

  it('limit-req-scale divides by the live replica count it is given', () => {
    const ann = { 'nginx.org/limit-req-rate': '10r/s', 'nginx.org/limit-req-scale': 'true' };
    assert.match(translate([cafe('cafe', ann)], 3).text, /zone=default\/cafe:10m rate=3r\/s;/);
    assert.match(translate([cafe('cafe', ann)], 40).text, /zone=default\/cafe:10m rate=15r\/m;/);
    assert.match(translate([cafe('cafe', ann)], null).text, /zone=default\/cafe:10m rate=10r\/s;/);
    const unscaled = { 'nginx.org/limit-req-rate': '10r/s' };
    assert.match(translate([cafe('cafe', unscaled)], 3).text, /zone=default\/cafe:10m rate=10r\/s;/);
  });

  it('ConfigMap zone-sync: NIC’s `_sync` zones with `sync`, limit-req-scale ignored with NIC’s warning', () => {
    const ann = { 'nginx.org/limit-req-rate': '10r/s', 'nginx.org/limit-req-scale': 'true' };
    const { text, problems } = translate([cafe('cafe', ann)], 3, { 'zone-sync': 'true' });
    assert.match(
      text,
      /limit_req_zone \$\{binary_remote_addr\} zone=default\/cafe_sync:10m rate=10r\/s sync;/,
    );
    assert.equal(
      locationBlock(text, 'location /tea')?.[1 + NIC_PROXY_HEADERS.length],
      'limit_req zone=default/cafe_sync;',
    );
    assert.deepEqual(
      problems.map((p) => [p.field, p.error, p.severity]),
      [
        [
          'metadata.annotations[nginx.org/limit-req-scale]',
          'Ingress default/cafe: both zone sync and rate limit scale are enabled, the rate limit scale value will not be used.',
          'warning',
        ],
      ],
    );
    // Off (the default): scaled as before, no warning.
    const off = translate([cafe('cafe', ann)], 3, { 'zone-sync': 'false' });
    assert.match(off.text, /zone=default\/cafe:10m rate=3r\/s;/);
    assert.deepEqual(off.problems, []);
  });

  it('limitswitch.io/zone-sync decides per Ingress, both ways, for NIC’s and ingress-nginx’s zones', () => {
    const synced = translate(
      [cafe('cafe', { 'nginx.org/limit-req-rate': '10r/s', 'limitswitch.io/zone-sync': 'true' })],
      null,
    );
    assert.match(synced.text, /zone=default\/cafe_sync:10m rate=10r\/s sync;/);
    const notSynced = translate(
      [cafe('cafe', { 'nginx.org/limit-req-rate': '10r/s', 'limitswitch.io/zone-sync': 'false' })],
      null,
      { 'zone-sync': 'true' },
    );
    assert.match(notSynced.text, /zone=default\/cafe:10m rate=10r\/s;/);
    const ingressNginx = translate(
      [cafe('cafe', { 'nginx.ingress.kubernetes.io/limit-rps': '5', 'limitswitch.io/zone-sync': 'true' })],
      null,
    );
    assert.match(
      ingressNginx.text,
      /limit_req_zone \$limit_\S+ zone=default_cafe_\S*_rps:5m rate=5r\/s sync;/,
    );
    const bad = translate([
      cafe('cafe', { 'nginx.org/limit-req-rate': '10r/s', 'limitswitch.io/zone-sync': 'yes' }),
    ]);
    assert.equal(bad.problems[0]?.field, 'metadata.annotations[limitswitch.io/zone-sync]');
    assert.equal(bad.problems[0]?.severity, 'error');
  });

  it('minions inherit the master’s limits, each with its own zone, and may override them', () => {
    const master = ingress('cafe-master', {
      annotations: {
        'nginx.org/mergeable-ingress-type': 'master',
        'nginx.org/limit-req-rate': '10r/s',
        'nginx.org/limit-req-burst': '5',
        'nginx.org/server-snippets': 'limit_req_status 444;',
      },
      rules: [{ host: 'cafe.example.com' }],
    });
    const tea = ingress('tea-minion', {
      created: 1,
      annotations: { 'nginx.org/mergeable-ingress-type': 'minion' },
      rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
    });
    const coffee = ingress('coffee-minion', {
      created: 2,
      annotations: {
        'nginx.org/mergeable-ingress-type': 'minion',
        'nginx.org/limit-req-rate': '1r/s',
        'nginx.org/server-snippets': 'return 500;',
      },
      rules: [{ host: 'cafe.example.com', paths: [{ path: '/coffee', svc: 'coffee-svc', port: 80 }] }],
    });
    const { text, problems } = translate([master, tea, coffee]);
    assert.deepEqual(problems, [
      {
        object: {
          kind: 'Ingress',
          apiVersion: 'networking.k8s.io/v1',
          namespace: 'default',
          name: 'coffee-minion',
          uid: 'uid-coffee-minion',
          resourceVersion: '1',
        },
        field: 'metadata.annotations[nginx.org/server-snippets]',
        error: 'not allowed on a minion (server-level settings belong to the master); ignored',
        severity: 'warning',
      },
    ]);
    assert.doesNotMatch(text, /zone=default\/cafe-master:/);
    assert.match(text, /limit_req_zone \$\{binary_remote_addr\} zone=default\/tea-minion:10m rate=10r\/s;/);
    assert.match(text, /limit_req_zone \$\{binary_remote_addr\} zone=default\/coffee-minion:10m rate=1r\/s;/);
    assert.equal(
      locationBlock(text, 'location /tea')?.[2 + NIC_PROXY_HEADERS.length],
      'limit_req zone=default/tea-minion burst=5;',
    );
    assert.equal(
      locationBlock(text, 'location /coffee')?.[2 + NIC_PROXY_HEADERS.length],
      'limit_req zone=default/coffee-minion burst=5;',
    );
    assert.match(text, /server_name cafe\.example\.com;\n {8}limit_req_status 444;\n/);
    assert.doesNotMatch(text, /return 500;/);
  });
});

describe('ingress-nginx limit-rps / limit-rpm (migration)', () => {
  it('zones, geo/map allowlist and nodelay bursts as ingress-nginx writes them', () => {
    const ing = cafe(
      'api',
      {
        'nginx.ingress.kubernetes.io/limit-rps': '5',
        'nginx.ingress.kubernetes.io/limit-rpm': '100',
        'nginx.ingress.kubernetes.io/limit-burst-multiplier': '3',
        'nginx.ingress.kubernetes.io/limit-whitelist': '192.168.0.0/16',
        'nginx.ingress.kubernetes.io/limit-allowlist': '10.0.0.0/8,127.0.0.1',
      },
      ['/tea'],
    );
    const { text, problems } = translate([ing], null, { 'limit-conn-zone-variable': '$remote_addr' });
    assert.deepEqual(problems, []);
    const id = rateLimitId('default_api_uid-api');
    assert.ok(
      text.includes(
        [
          '    # Ratelimit default_api_uid-api',
          `    geo $remote_addr $allowlist_${id} {`,
          '        default 0;',
          '        10.0.0.0/8 1;',
          '        127.0.0.1 1;',
          '    }',
          `    map $allowlist_${id} $limit_${id} {`,
          '        0 $remote_addr;',
          '        1 "";',
          '    }',
          `    limit_req_zone $limit_${id} zone=default_api_uid-api_rpm:5m rate=100r/m;`,
          `    limit_req_zone $limit_${id} zone=default_api_uid-api_rps:5m rate=5r/s;`,
        ].join('\n'),
      ),
      text,
    );
    assert.deepEqual(locationBlock(text, 'location /tea')?.slice(1 + NIC_PROXY_HEADERS.length), [
      'limit_req zone=default_api_uid-api_rpm burst=300 nodelay;',
      'limit_req zone=default_api_uid-api_rps burst=15 nodelay;',
    ]);
  });

  it('an IPv6 CIDR and nginx-read leading zeros in the allowlist reach the geo as written', () => {
    const allowlist = '2001:db8::/32, 010.0.0.0/8';
    const ing = cafe(
      'api',
      {
        'nginx.ingress.kubernetes.io/limit-rps': '5',
        'nginx.ingress.kubernetes.io/limit-allowlist': allowlist,
      },
      ['/tea'],
    );
    const { text, problems } = translate([ing]);
    assert.deepEqual(problems, [], 'the config check took the geo too');
    assert.ok(
      text.includes('        default 0;\n        010.0.0.0/8 1;\n        2001:db8::/32 1;\n    }'),
      text,
    );
  });

  it('an allowlist entry nginx would refuse rejects the Ingress on that annotation', () => {
    for (const bad of ['127.1', '0x7f.0.0.1', '10.0.0.0/33', 'fe80::1%eth0']) {
      const { text, problems } = translate([
        cafe(
          'api',
          {
            'nginx.ingress.kubernetes.io/limit-rps': '5',
            'nginx.ingress.kubernetes.io/limit-allowlist': `10.0.0.0/8,${bad}`,
          },
          ['/tea'],
        ),
      ]);
      assert.deepEqual(
        problems.map((p) => [p.object.kind, p.object.name, p.field, p.error, p.severity, p.keptLastGood]),
        [
          [
            'Ingress',
            'api',
            'metadata.annotations[nginx.ingress.kubernetes.io/limit-allowlist]',
            `invalid value "10.0.0.0/8,${bad}": "${bad}" is not an IP address or CIDR`,
            'error',
            false,
          ],
        ],
      );
      assert.equal(serverBlock(text, 'cafe.example.com'), null);
    }
  });

  it('burst multiplier defaults to 5 and the key to $binary_remote_addr', () => {
    const { text } = translate([cafe('api', { 'nginx.ingress.kubernetes.io/limit-rps': '2' }, ['/tea'])]);
    assert.match(text, /\n {8}0 \$binary_remote_addr;\n/);
    assert.equal(
      locationBlock(text, 'location /tea')?.[1 + NIC_PROXY_HEADERS.length],
      'limit_req zone=default_api_uid-api_rps burst=10 nodelay;',
    );
  });

  it('zone ids never contain "-", which nginx variable names cannot hold', () => {
    // Valid object names never produce "-" in base64url; "~" at offset 2 does (6-bit value 62).
    assert.equal(Buffer.from('ab~').toString('base64url'), 'YWJ-');
    assert.equal(rateLimitId('ab~'), 'YWJ_');
  });
});

describe('ConfigMap settings', () => {
  it('global snippets apply unless an annotation replaces them; limit_req_status at http level', () => {
    const data = {
      'location-snippets': 'limit_req zone=global nodelay;',
      'server-snippets': 'limit_req_dry_run on;',
      'limit-req-status-code': '429',
      'set-real-ip-from': '10.0.0.0/8, 192.168.0.0/16',
      'real-ip-header': 'X-Forwarded-For',
      'real-ip-recursive': 'true',
      'http-snippets':
        'limit_req_zone $binary_remote_addr zone=global:1m rate=1r/s;\nlimit_req_zone $binary_remote_addr zone=own:1m rate=1r/s;',
    };
    const plain = cafe('plain', {}, ['/tea']);
    const own = ingress('own', {
      created: 1,
      annotations: { 'nginx.org/location-snippets': 'limit_req zone=own;' },
      rules: [{ host: 'own.example.com', paths: [{ path: '/', svc: 'x', port: 80 }] }],
    });
    const { text, problems } = translate([plain, own], null, data);
    assert.deepEqual(problems, []);
    assert.deepEqual(locationBlock(text, 'location /tea')?.[0], 'limit_req zone=global nodelay;');
    assert.deepEqual(locationBlock(text, 'location /')?.[0], 'limit_req zone=own;');
    assert.match(text, /\n {4}limit_req_status 429;\n/);
    assert.match(
      text,
      /server_name cafe\.example\.com;\n {8}set_real_ip_from 10\.0\.0\.0\/8;\n {8}set_real_ip_from 192\.168\.0\.0\/16;\n {8}real_ip_header X-Forwarded-For;\n {8}real_ip_recursive on;\n {8}limit_req_dry_run on;\n/,
    );
  });

  it('zone_sync’s transport keys are not used, and say so', () => {
    const { problems } = translate([], null, { 'zone-sync': 'true', 'zone-sync-port': '12345' });
    assert.deepEqual(
      problems.map((p) => [p.field, p.severity]),
      [['data[zone-sync-port]', 'warning']],
    );
    assert.match(problems[0]!.error, /sync cluster-wide limits through the store/);
  });

  it('a set-real-ip-from entry nginx would refuse is reported on that ConfigMap key', () => {
    const { text, problems } = translate([cafe('plain', {}, ['/tea'])], null, {
      'set-real-ip-from': '2001:db8::/32, 127.1',
    });
    assert.deepEqual(
      problems.map((p) => [p.object.kind, p.field, p.error, p.severity]),
      [
        [
          'ConfigMap',
          'data[set-real-ip-from]',
          'invalid value "2001:db8::/32, 127.1": "127.1" is not an IP address or CIDR',
          'error',
        ],
      ],
    );
    assert.doesNotMatch(text, /set_real_ip_from/);
  });
});
