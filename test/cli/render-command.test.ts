import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { render } from '../../src/cli/render-command.ts';
import { TestPki } from '../helpers/tls-certs.ts';
import { locationBlock, NIC_PROXY_HEADERS, serverBlock } from '../k8s/builders.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cafe = join(root, 'deploy/examples/cafe');
const fixtures = join(root, 'test/k8s/fixtures');
const cli = join(root, 'bin/limitswitch.js');

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8', timeout: 60_000 });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/** The cafe example names a TLS Secret it does not carry (as the seed's does): the host is plain HTTP. */
const NO_CAFE_SECRET =
  'limitswitch: [warning] Ingress default/cafe-ingress-master: spec.tls: TLS for host "cafe.example.com" names secret default/cafe-secret, which is missing or unusable; the host is served over plain HTTP only';

describe('limitswitch render', () => {
  it('the cafe example (v1) gives /tea and /coffee with the seed’s limit_req lines', () => {
    const out = render({ file: [cafe], ingressClass: 'limitswitch' });
    assert.deepEqual(out.messages, [NO_CAFE_SECRET]);
    assert.equal(out.exitCode, 0);
    assert.deepEqual(locationBlock(out.text, 'location /tea'), [
      '# location for minion default/cafe-ingress-teasvc-minion',
      'limit_req zone=req_zone_10 burst=1 nodelay;',
      'limit_req zone=perserver nodelay;',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-cafe-ingress-teasvc-minion-cafe.example.com-tea-svc-80;',
    ]);
    assert.deepEqual(locationBlock(out.text, 'location /coffee'), [
      '# location for minion default/cafe-ingress-coffeesvc-minion',
      'limit_req zone=req_zone_20 burst=1 nodelay;',
      'limit_req zone=perserver nodelay;',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-cafe-ingress-coffeesvc-minion-cafe.example.com-coffee-svc-80;',
    ]);
  });

  it('the seed’s legacy extensions/v1beta1 objects render the same server', () => {
    const legacy = render({
      file: [join(fixtures, 'seed-configmap.yaml'), join(fixtures, 'seed-mergeable-v1beta1.yaml')],
      ingressClass: 'nginx',
    });
    const v1 = render({ file: [cafe], ingressClass: 'limitswitch' });
    assert.equal(legacy.exitCode, 0);
    assert.deepEqual(serverBlock(legacy.text, 'cafe.example.com'), serverBlock(v1.text, 'cafe.example.com'));
  });

  // Issue 18 §3.4: lines without "port" went to the first listen, the ConfigMap's API server on 9999.
  for (const port of [80, undefined]) {
    it(`simulate on the rendered config limits /coffee once it is switched on, and never /tea (${port === undefined ? 'no "port": the server curl http://127.0.0.1/ reaches' : `"port": ${port}`})`, () => {
      const rendered = run(['render', '-f', cafe, '--ingress-class', 'limitswitch']);
      assert.equal(rendered.stderr, `${NO_CAFE_SECRET}\n`);
      assert.equal(rendered.status, 0);
      const dir = mkdtempSync(join(tmpdir(), 'limitswitch-render-'));
      try {
        const conf = join(dir, 'cafe.conf');
        writeFileSync(conf, rendered.stdout);
        const req = (t: number, uri: string) =>
          JSON.stringify({ t, addr: '10.0.0.1', host: 'cafe.example.com', uri, port });
        const input = [
          req(1000, '/coffee'),
          req(1000, '/coffee'),
          req(1000, '/coffee'),
          JSON.stringify({ t: 1001, keyval: { zone: 'limitreq_uri', key: '/coffee', value: '1' } }),
          req(1002, '/coffee'),
          req(1002, '/coffee'),
          req(1002, '/coffee'),
          req(1002, '/tea'),
          req(1002, '/tea'),
          req(1002, '/tea'),
        ].join('\n');
        const sim = run(['simulate', '-c', conf], `${input}\n`);
        assert.equal(sim.stderr, '');
        const rows = sim.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { status: string; code: number; zone: string | null });
        assert.deepEqual(
          rows.map((r) => [r.status, r.code, r.zone]),
          [
            ['', 200, null],
            ['', 200, null],
            ['', 200, null],
            ['PASSED', 200, 'req_zone_20'],
            ['PASSED', 200, 'req_zone_20'],
            ['REJECTED', 503, 'req_zone_20'],
            ['', 200, null],
            ['', 200, null],
            ['', 200, null],
          ],
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('says which Ingresses another --ingress-class leaves out, and why (issue 18 §3.5)', () => {
    const r = run([
      'render',
      '-f',
      join(fixtures, 'seed-configmap.yaml'),
      join(fixtures, 'seed-mergeable-v1beta1.yaml'),
      '--ingress-class',
      'limitswitch',
    ]);
    assert.equal(r.status, 0);
    assert.equal(serverBlock(r.stdout, 'cafe.example.com'), null);
    assert.equal(
      r.stderr,
      [
        'limitswitch: [warning] Ingress default/cafe-ingress-master: not served: its class is "nginx", not "limitswitch" (--ingress-class)',
        'limitswitch: [warning] Ingress default/cafe-ingress-teasvc-minion: not served: its class is "nginx", not "limitswitch" (--ingress-class)',
        'limitswitch: [warning] Ingress default/cafe-ingress-coffeesvc-minion: not served: its class is "nginx", not "limitswitch" (--ingress-class)',
        'limitswitch: [warning] none of the 3 Ingresses given is of class "limitswitch": no server rendered for them',
        '',
      ].join('\n'),
    );
  });

  it('--watch-ingress-without-class also renders Ingresses that name no class, as the replica flag does', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-render-'));
    try {
      const classless = join(dir, 'classless.yaml');
      writeFileSync(
        classless,
        [
          'apiVersion: networking.k8s.io/v1',
          'kind: Ingress',
          'metadata: {name: plain}',
          'spec:',
          '  rules:',
          '  - host: plain.example.com',
          '    http:',
          '      paths:',
          '      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}',
        ].join('\n'),
      );
      const without = run(['render', '-f', classless, '--ingress-class', 'limitswitch']);
      assert.equal(
        without.stderr.split('\n')[0],
        'limitswitch: [warning] Ingress default/plain: not served: it names no IngressClass and --ingress-class is "limitswitch"; --watch-ingress-without-class serves it',
      );
      assert.equal(serverBlock(without.stdout, 'plain.example.com'), null);
      const withFlag = run([
        'render',
        '-f',
        classless,
        '--ingress-class',
        'limitswitch',
        '--watch-ingress-without-class',
      ]);
      assert.doesNotMatch(withFlag.stderr, /not served/);
      assert.ok(serverBlock(withFlag.stdout, 'plain.example.com'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a rejected object on stderr and exits 1, still printing the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-render-'));
    try {
      const bad = join(dir, 'bad.yaml');
      writeFileSync(
        bad,
        [
          'apiVersion: networking.k8s.io/v1',
          'kind: Ingress',
          'metadata:',
          '  name: bad',
          '  annotations:',
          '    nginx.org/limit-req-rate: "10 per second"',
          'spec:',
          '  rules:',
          '  - host: bad.example.com',
          '    http:',
          '      paths:',
          '      - path: /',
          '        pathType: Prefix',
          '        backend: {service: {name: web, port: {number: 80}}}',
        ].join('\n'),
      );
      const r = run(['render', '-f', cafe, bad]);
      assert.equal(r.status, 1);
      assert.equal(
        r.stderr,
        'limitswitch: [error] Ingress default/bad: metadata.annotations[nginx.org/limit-req-rate]: invalid value "10 per second": must be a rate like 10r/s or 600r/m; not served\n' +
          `${NO_CAFE_SECRET}\n`,
      );
      assert.ok(serverBlock(r.stdout, 'cafe.example.com'));
      assert.equal(serverBlock(r.stdout, 'bad.example.com'), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names on stderr, once per Ingress and annotation, what it does not carry over, as migrate does (issue 34 §5)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-render-'));
    const ingress = (name: string, className: string, annotations: Record<string, string>) =>
      [
        'apiVersion: networking.k8s.io/v1',
        'kind: Ingress',
        'metadata:',
        `  name: ${name}`,
        '  annotations:',
        ...Object.entries(annotations).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`),
        'spec:',
        `  ingressClassName: ${className}`,
        '  rules:',
        `  - host: ${name}.example.com`,
        '    http:',
        '      paths:',
        '      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}',
      ].join('\n');
    try {
      const file = join(dir, 'ingresses.yaml');
      writeFileSync(
        file,
        [
          ingress('a', 'limitswitch', {
            'nginx.org/proxy-read-timeout': '120s',
            'nginx.org/limit-req-rate': '10r/s',
            'nginx.org/client-max-body-size': '8m',
            'kubectl.kubernetes.io/last-applied-configuration': '{}',
          }),
          ingress('b', 'limitswitch', {
            'nginx.ingress.kubernetes.io/limit-connections': '5',
            'nginx.org/proxy-read-timeout': '120s',
          }),
          // Not served: its annotations are not the question.
          ingress('c', 'nginx', { 'nginx.org/proxy-read-timeout': '120s' }),
        ].join('\n---\n'),
      );
      const r = run(['render', '-f', file, '--ingress-class', 'limitswitch']);
      assert.equal(r.status, 0);
      const dropped = (ing: string, annotation: string) =>
        `limitswitch: [warning] Ingress default/${ing}: metadata.annotations[${annotation}]: not carried over (limitswitch does not read it)`;
      assert.deepEqual(
        r.stderr.split('\n').filter((line) => !line.includes('not served')),
        [
          dropped('a', 'nginx.org/client-max-body-size'),
          dropped('a', 'nginx.org/proxy-read-timeout'),
          dropped('b', 'nginx.ingress.kubernetes.io/limit-connections'),
          dropped('b', 'nginx.org/proxy-read-timeout'),
          '',
        ],
      );
      assert.doesNotMatch(r.stdout, /not carried over/);
      assert.match(locationBlock(r.stdout, 'location /')?.join('\n') ?? '', /limit_req zone=/);
      assert.ok(serverBlock(r.stdout, 'b.example.com'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks which ConfigMap to use when several are given', () => {
    const r = run(['render', '-f', cafe, join(fixtures, 'seed-configmap.yaml')]);
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      'limitswitch render: several ConfigMaps given (limitswitch/limitswitch-config, nginx-ingress/nginx-config); choose one with --configmap NAMESPACE/NAME\n',
    );
    const chosen = run([
      'render',
      '-f',
      cafe,
      join(fixtures, 'seed-configmap.yaml'),
      '--configmap',
      'nginx-ingress/nginx-config',
    ]);
    assert.equal(chosen.status, 0);
    assert.match(chosen.stdout, /# ConfigMap nginx-ingress\/nginx-config: http-snippets/);
  });
});

describe('limitswitch render: Ingress TLS with its Secret', () => {
  it('prints the TLS lines NIC writes and the ssl-redirect server', () => {
    const pki = new TestPki();
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-render-'));
    try {
      const cert = pki.server('cafe', ['cafe.example.com']);
      const secret = join(dir, 'cafe-secret.yaml');
      writeFileSync(
        secret,
        [
          'apiVersion: v1',
          'kind: Secret',
          'type: kubernetes.io/tls',
          'metadata: {name: cafe-secret, namespace: default}',
          'data:',
          `  tls.crt: ${Buffer.from(pki.read(cert.cert)).toString('base64')}`,
          `  tls.key: ${Buffer.from(pki.read(cert.key)).toString('base64')}`,
        ].join('\n'),
      );
      const out = render({ file: [cafe, secret], ingressClass: 'limitswitch' });
      assert.deepEqual(out.messages, []);
      const server = serverBlock(out.text, 'cafe.example.com')!;
      assert.deepEqual(
        server.filter((line) => /^(listen|ssl_|# TLS)/.test(line)),
        [
          '# TLS: secret default/cafe-secret (resourceVersion none)',
          'listen 443 ssl;',
          'ssl_certificate /etc/limitswitch/secrets/default-cafe-secret;',
          'ssl_certificate_key /etc/limitswitch/secrets/default-cafe-secret;',
        ],
      );
      assert.match(
        out.text,
        /listen 80;\n {8}server_name cafe\.example\.com;\n {8}return 301 "?https:\/\/\$host\$request_uri"?;/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
      pki.remove();
    }
  });
});
