/**
 * The `ssl_*` directives, `listen … ssl|http2` and `http2`: what they read into a server's settings
 * (nginx's defaults, http → server inheritance, certificate/key pairs, the address-wide `ssl`), and
 * their errors worded as `nginx -t` words them — each bad file also run through real nginx — or, for
 * what the replica does not honour, refused as not supported.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { loadConfigFile } from '../../src/config/index.ts';
import { ConfigPair } from '../helpers/config-pair.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const pki = new TestPki();
const rsa = pki.server('rsa', ['cafe.example.com']);
const ec = pki.server('ec', ['cafe.example.com'], 'ec');
after(() => pki.remove());
const { file, ours, nginxT } = new ConfigPair(pki.dir);

/** The text nginx and limitswitch share: without the position, and without OpenSSL's error stack. */
const core = (text: string): string => text.replace(/ \(SSL: .*$/, '').replace(/ in \S+:\d+$/, '');

describe('ssl directives', () => {
  test('settings: defaults, inheritance from http, certificates paired by order, address-wide ssl and http2', () => {
    const path = file(`
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    server {
        listen 8443 ssl http2;
        server_name cafe.example.com;
        ssl_certificate ${rsa.cert};
        ssl_certificate_key ${rsa.key};
        ssl_certificate ${ec.cert};
        ssl_certificate_key ${ec.key};
        ssl_session_timeout 10m;
    }
    server { listen 8443; server_name tea.example.com; ssl_certificate ${rsa.cert}; ssl_certificate_key ${rsa.key}; }
    server { listen 8080; }`);
    const [cafe, tea, plain] = loadConfigFile(path).http.servers;
    assert.deepEqual(
      cafe!.ssl.certificates.map((c) => [c.certPath, c.keyPath]),
      [
        [rsa.cert, rsa.key],
        [ec.cert, ec.key],
      ],
    );
    assert.deepEqual(cafe!.ssl.protocols, ['TLSv1.2', 'TLSv1.3']);
    assert.equal(cafe!.ssl.sessionCache, 'shared');
    assert.equal(cafe!.ssl.sessionTimeoutS, 600);
    assert.equal(tea!.ssl.sessionTimeoutS, 300);
    assert.equal(cafe!.ssl.ciphers, 'HIGH:!aNULL:!MD5');
    assert.equal(cafe!.ssl.verifyClient, 'off');
    // ssl and http2 belong to the address: tea serves 8443 with TLS and h2 too
    assert.deepEqual(tea!.listen[0], {
      host: null,
      port: 8443,
      defaultServer: false,
      ssl: true,
      http2: true,
    });
    assert.deepEqual(plain!.listen[0], {
      host: null,
      port: 8080,
      defaultServer: false,
      ssl: false,
      http2: false,
    });
  });

  const cases: readonly [string, string][] = [
    ['a TLS address whose default server has no certificate', 'server { listen 8443 ssl; }'],
    ['a certificate without its key', `server { listen 8443 ssl; ssl_certificate ${rsa.cert}; }`],
    [
      'verify_client without a CA',
      `server { listen 8443 ssl; ssl_certificate ${rsa.cert}; ssl_certificate_key ${rsa.key}; ssl_verify_client on; }`,
    ],
    [
      'a missing certificate file',
      `server { listen 8443 ssl; ssl_certificate ${pki.dir}/nope.crt; ssl_certificate_key ${rsa.key}; }`,
    ],
    ['an unknown protocol', 'ssl_protocols TLSv1.2 TLSv1.4;'],
    ['a bad session cache', 'ssl_session_cache shared:SSL;'],
    ['a bad verify_client value', 'ssl_verify_client sometimes;'],
    ['ssl_ciphers twice', 'ssl_ciphers HIGH; ssl_ciphers LOW;'],
  ];
  for (const [name, http] of cases) {
    test(`worded as nginx -t words it: ${name}`, () => {
      const path = file(http);
      const expected = nginxT(path);
      assert.notEqual(expected, 'loaded');
      const text = ours(path);
      // nginx prints no position for errors found while merging (limitswitch adds the directive's),
      // and OpenSSL's own error stack after "(SSL:"
      assert.equal(core(text), core(expected));
      if (/ in \S+:\d+$/.test(expected) && !expected.includes('(SSL:')) assert.equal(text, expected);
    });
  }

  test('what the replica does not honour is refused, never ignored', () => {
    assert.match(ours(file('ssl_stapling on;')), /^"ssl_stapling on" is not supported by limitswitch/);
    assert.match(ours(file('ssl_early_data on;')), /^"ssl_early_data on" is not supported by limitswitch/);
    assert.match(ours(file('ssl_ocsp on;')), /^"ssl_ocsp" directive is not supported by limitswitch/);
    assert.match(
      ours(file('server { listen 443 quic; }')),
      /the "quic" parameter of "listen" is not supported/,
    );
    assert.match(ours(file('ssl_made_up on;')), /^unknown directive "ssl_made_up"/);
    assert.equal(ours(file('ssl_stapling off; ssl_early_data off;')), 'loaded');
  });
});
