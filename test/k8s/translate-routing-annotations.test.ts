/**
 * The annotations that change where a request goes, rendered as their controllers render them:
 * ingress-nginx's `use-regex`/`rewrite-target` (its template's buildLocation and buildProxyPass, the
 * regex enforced on every location of the host, its location order), `app-root`, the redirects,
 * `force-ssl-redirect`, the snippets; NIC's `nginx.org/rewrites` and `redirect-to-https`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { simulateLine } from '../../src/cli/simulate.ts';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import type { Ingress } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import { ingress, locationBlock, serverBlock } from './builders.ts';

function render(ingresses: Ingress[]) {
  return new ClusterTranslator({}).translate({
    ingresses,
    services: [],
    endpointSlices: [],
    configMap: null,
  });
}

const ING = 'nginx.ingress.kubernetes.io/';
const UPSTREAM = 'proxy_pass http://default-api-api.example.com-users-8080;';

/** The Ingress: ingress-nginx's documented capture rewrite. */
export function regexIngress(extra: Record<string, string> = {}): Ingress {
  return ingress('api', {
    annotations: {
      [`${ING}use-regex`]: 'true',
      [`${ING}rewrite-target`]: '/$2',
      [`${ING}limit-rps`]: '5',
      ...extra,
    },
    rules: [
      {
        host: 'api.example.com',
        paths: [
          { path: '/v1(/|$)(.*)', type: 'ImplementationSpecific', svc: 'users', port: 8080 },
          { path: '/health', type: 'Exact', svc: 'users', port: 8080 },
        ],
      },
    ],
  });
}

describe('ingress-nginx: use-regex and rewrite-target', () => {
  it('a regex path becomes location ~* "^<path>" with the rewrite before proxy_pass, as buildLocation/buildProxyPass write them', () => {
    const { text, problems } = render([regexIngress()]);
    assert.deepEqual(problems, []);
    const loc = locationBlock(text, 'location ~* "^/v1(/|$)(.*)"');
    assert.ok(loc, text);
    const rewrite = loc.indexOf('rewrite "(?i)/v1(/|$)(.*)" /$2 break;');
    assert.ok(rewrite !== -1 && rewrite < loc.indexOf(UPSTREAM), loc.join('\n'));
    assert.ok(loc.some((l) => l.startsWith('limit_req zone=')));
  });

  it('every location of the host becomes ~*, an Exact path too, longest path first (ingress-nginx order)', () => {
    const api = regexIngress();
    const paths = api.spec!.rules![0]!.http!.paths as unknown[];
    paths.push({
      path: '/static',
      pathType: 'Prefix',
      backend: { service: { name: 'users', port: { number: 8080 } } },
    });
    const { text } = render([api]);
    const server = serverBlock(text, 'api.example.com')!;
    const headers = server.filter((l) => l.startsWith('location '));
    assert.deepEqual(headers, [
      'location ~* "^/v1(/|$)(.*)" {',
      'location ~* "^/static" {',
      'location ~* "^/health" {',
    ]);
  });

  it('without use-regex and rewrite-target the paths stay prefix and exact locations', () => {
    const { text } = render([
      ingress('plain', {
        annotations: { [`${ING}rewrite-target`]: '/api' },
        rules: [{ host: 'a.example.com', paths: [{ path: '/api', type: 'Prefix', svc: 's', port: 80 }] }],
      }),
    ]);
    // a target equal to the path is no rewrite (ingress-nginx's needsRewrite)
    assert.ok(locationBlock(text, 'location /api'), text);
  });
});

describe('ingress-nginx: redirects, app-root, snippets', () => {
  const one = (annotations: Record<string, string>) =>
    render([
      ingress('r', {
        annotations,
        rules: [{ host: 'r.example.com', paths: [{ path: '/shop', type: 'Prefix', svc: 's', port: 80 }] }],
      }),
    ]);

  it('permanent-redirect and temporal-redirect answer with return before proxy_pass, codes out of range defaulted', () => {
    const cases: [Record<string, string>, string][] = [
      [
        { [`${ING}permanent-redirect`]: 'https://shop.example.com/new' },
        'return 301 https://shop.example.com/new;',
      ],
      [
        { [`${ING}permanent-redirect`]: 'https://x.example/', [`${ING}permanent-redirect-code`]: '308' },
        'return 308 https://x.example/;',
      ],
      [
        { [`${ING}permanent-redirect`]: 'https://x.example/', [`${ING}permanent-redirect-code`]: '400' },
        'return 301 https://x.example/;',
      ],
      [
        {
          [`${ING}temporal-redirect`]: 'https://t.example/',
          [`${ING}permanent-redirect`]: 'https://p.example/',
        },
        'return 302 https://t.example/;',
      ],
      [
        { [`${ING}temporal-redirect`]: 'https://t.example/', [`${ING}temporal-redirect-code`]: '308' },
        'return 302 https://t.example/;',
      ],
    ];
    for (const [annotations, line] of cases) {
      const { text, problems } = one(annotations);
      assert.deepEqual(problems, []);
      const loc = locationBlock(text, 'location /shop')!;
      assert.ok(
        loc.includes(line) && loc.indexOf(line) < loc.findIndex((l) => l.startsWith('proxy_pass')),
        loc.join('\n'),
      );
    }
  });

  it('an invalid redirect URL or code is an error on its annotation', () => {
    const { problems } = one({ [`${ING}permanent-redirect`]: 'https://x.example/ a' });
    assert.equal(problems[0]?.field, `metadata.annotations[${ING}permanent-redirect]`);
    assert.equal(problems[0]?.severity, 'error');
  });

  it('app-root: the server answers / with 302 to $scheme://$http_host<root>', () => {
    const { text } = one({ [`${ING}app-root`]: '/app1' });
    const server = serverBlock(text, 'r.example.com')!;
    const line = 'if ($uri = /) { return 302 $scheme://$http_host/app1; }';
    assert.ok(server.indexOf(line) !== -1 && server.indexOf(line) < server.indexOf('location /shop {'));
  });

  it('force-ssl-redirect: plain HTTP to the location gets 308, with no TLS for the host', () => {
    const { text } = one({ [`${ING}force-ssl-redirect`]: 'true' });
    assert.ok(
      locationBlock(text, 'location /shop')!.includes(
        'if ($scheme = http) { return 308 https://$host$request_uri; }',
      ),
    );
  });

  it('configuration-snippet goes into each location, server-snippet into the server; a bad one is an error', () => {
    const { text } = one({
      [`${ING}configuration-snippet`]: 'add_header X-Shop yes;',
      [`${ING}server-snippet`]: 'add_header X-Server yes;',
    });
    assert.ok(locationBlock(text, 'location /shop')!.includes('add_header X-Shop yes;'));
    const server = serverBlock(text, 'r.example.com')!;
    assert.ok(server.indexOf('add_header X-Server yes;') < server.indexOf('location /shop {'));
    const bad = one({ [`${ING}configuration-snippet`]: '} server {' });
    assert.equal(bad.problems[0]?.field, `metadata.annotations[${ING}configuration-snippet]`);
  });
});

describe('NIC: nginx.org/rewrites and nginx.org/redirect-to-https', () => {
  it("rewrites: the Service's locations pass proxy_pass with the path as its URI part", () => {
    const { text, problems } = render([
      ingress('cafe', {
        annotations: {
          'nginx.org/rewrites': 'serviceName=tea-svc rewrite=/;serviceName=coffee-svc rewrite=/beans/',
        },
        rules: [
          {
            host: 'cafe.example.com',
            paths: [
              { path: '/tea/', svc: 'tea-svc', port: 80 },
              { path: '/coffee/', svc: 'coffee-svc', port: 80 },
              { path: '/menu', svc: 'menu-svc', port: 80 },
            ],
          },
        ],
      }),
    ]);
    assert.deepEqual(problems, []);
    assert.ok(
      locationBlock(text, 'location /tea/')!.includes(
        'proxy_pass http://default-cafe-cafe.example.com-tea-svc-80/;',
      ),
    );
    assert.ok(
      locationBlock(text, 'location /coffee/')!.includes(
        'proxy_pass http://default-cafe-cafe.example.com-coffee-svc-80/beans/;',
      ),
    );
    assert.ok(
      locationBlock(text, 'location /menu')!.includes(
        'proxy_pass http://default-cafe-cafe.example.com-menu-svc-80;',
      ),
    );
  });

  it('rewrites: a malformed list is an error on the annotation', () => {
    const { problems } = render([
      ingress('cafe', {
        annotations: { 'nginx.org/rewrites': 'serviceName=tea-svc rewrite=/$1' },
        rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea/', svc: 'tea-svc', port: 80 }] }],
      }),
    ]);
    assert.equal(problems[0]?.field, 'metadata.annotations[nginx.org/rewrites]');
  });

  it('redirect-to-https: X-Forwarded-Proto http gets 301 at the server', () => {
    const { text } = render([
      ingress('cafe', {
        annotations: { 'nginx.org/redirect-to-https': 'true' },
        rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
      }),
    ]);
    assert.ok(
      serverBlock(text, 'cafe.example.com')!.includes(
        "if ($http_x_forwarded_proto = 'http') { return 301 https://$host$request_uri; }",
      ),
    );
  });
});

describe('an annotation nothing reads', () => {
  it('is a warning of the translation itself (render prints it, the replica records it as an Event)', () => {
    const { problems } = render([
      ingress('cafe', {
        annotations: {
          'nginx.org/proxy-read-timeout': '120s',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
        },
        rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
      }),
    ]);
    assert.deepEqual(
      problems.map((p) => [p.field, p.error, p.severity]),
      [
        [
          'metadata.annotations[nginx.org/proxy-read-timeout]',
          'not carried over (limitswitch does not read it)',
          'warning',
        ],
      ],
    );
  });
});

describe('the issue’s regex Ingress through simulate', () => {
  it('limits /v1/users at 5 r/s (burst 25, nodelay) and sends it as /users', () => {
    const { text } = render([regexIngress()]);
    const site = buildSite(loadConfigText(text, 'rendered.conf').http);
    const line = (t: number) =>
      simulateLine(site, { t, addr: '10.0.0.1', host: 'api.example.com', uri: '/v1/users?page=2' }, 80)!;
    // the burst: 1 + 25 pass at once, then the limit
    const first = Array.from({ length: 27 }, () => line(0));
    assert.deepEqual(
      first.map((r) => r.code),
      [...Array<number>(26).fill(200), 503],
    );
    assert.equal(first[0]!.uri, '/users?page=2');
    // then a request every 100 ms: the first second also spends what the bucket regained since the
    // burst, then 5 a second
    const later = Array.from({ length: 60 }, (_, i) => line(1000 + i * 100));
    const passedPerSecond = [0, 1, 2, 3, 4, 5].map(
      (s) => later.slice(s * 10, s * 10 + 10).filter((r) => r.code === 200).length,
    );
    assert.deepEqual(passedPerSecond, [9, 5, 5, 5, 5, 5]);
  });
});

describe("NIC's path-regex and rewrite-target", () => {
  const nic = (annotations: Record<string, string>, path = '/menu/([^/]+)/([^/]+)') =>
    render([
      ingress('cafe', {
        annotations,
        rules: [
          {
            host: 'cafe.example.com',
            paths: [{ path, type: 'ImplementationSpecific', svc: 'coffee-svc', port: 80 }],
          },
        ],
      }),
    ]);

  it('case_sensitive, case_insensitive and exact paths, and the rewrite pattern matching as the location does', () => {
    const sensitive = nic({
      'nginx.org/path-regex': 'case_sensitive',
      'nginx.org/rewrite-target': '/beverages/$1/$2',
    });
    assert.deepEqual(sensitive.problems, []);
    const loc = locationBlock(sensitive.text, 'location ~ ^/menu/([^/]+)/([^/]+)')!;
    assert.ok(loc.includes('rewrite ^/menu/([^/]+)/([^/]+) /beverages/$1/$2 break;'), loc.join('\n'));
    const insensitive = nic({ 'nginx.org/path-regex': 'case_insensitive' }, '/tea');
    assert.ok(locationBlock(insensitive.text, 'location ~* "^/tea"'));
    const exact = nic({ 'nginx.org/path-regex': 'exact' }, '/tea');
    assert.ok(locationBlock(exact.text, 'location = /tea'));
    const plain = nic({ 'nginx.org/rewrite-target': '/beverages/coffee' }, '/coffee');
    assert.ok(
      locationBlock(plain.text, 'location /coffee')!.includes('rewrite /coffee /beverages/coffee break;'),
    );
  });

  it("refuses an Ingress that both controllers' routing annotations would read differently", () => {
    const { problems } = nic({ 'nginx.org/path-regex': 'case_sensitive', [`${ING}use-regex`]: 'true' });
    assert.equal(problems.length, 1);
    assert.equal(problems[0]!.severity, 'error');
    assert.match(problems[0]!.error, /disagree on what the paths mean/);
  });
});
