/**
 * `proxy_pass https://` and the `proxy_ssl_*` directives: what they read into a location's settings
 * (nginx 1.22's defaults, each inherited on its own from http and server), and what fails the load —
 * as `nginx -t` words it where nginx refuses too (each such file also run through real nginx), or
 * refused as not supported where the replica cannot honour it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfigFile } from '../../src/config/index.ts';
import { DEFAULT_PROXY_SSL } from '../../src/engine/http/proxy-ssl.ts';
import { ConfigPair } from '../helpers/config-pair.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const pki = new TestPki();
const client = pki.client('client', '/CN=proxy');
/** The client's key, encrypted with the password "secret". */
const lockedKey = join(pki.dir, 'locked.key');
execFileSync('openssl', ['rsa', '-in', client.key, '-aes256', '-passout', 'pass:secret', '-out', lockedKey], {
  stdio: 'pipe',
});
const passwords = join(pki.dir, 'passwords');
writeFileSync(passwords, 'wrong\r\n\nsecret\n');
const wrongPasswords = join(pki.dir, 'wrong-passwords');
writeFileSync(wrongPasswords, 'wrong\n');
after(() => pki.remove());
const { file, ours, nginxT } = new ConfigPair(pki.dir);

/** A server on 8080 with `location` blocks. */
const server = (locations: string) => `server {\n listen 8080;\n${locations}\n}`;

describe('proxy_pass https:// and proxy_ssl_*', () => {
  test('nginx 1.22 defaults: no verification, depth 1, no SNI, $proxy_host, TLSv1–TLSv1.2, DEFAULT, sessions reused', () => {
    const path = file(server('location / { proxy_pass https://127.0.0.1:8443/; }'));
    const ssl = loadConfigFile(path).http.servers[0]!.locations[0]!.proxySsl;
    assert.deepEqual(
      { ...ssl, certificateFile: undefined, certificateKeyFile: undefined },
      {
        ...DEFAULT_PROXY_SSL,
        certificateFile: undefined,
        certificateKeyFile: undefined,
      },
    );
    assert.deepEqual(ssl.protocols, ['TLSv1', 'TLSv1.1', 'TLSv1.2']);
    assert.equal(nginxT(path), 'loaded');
  });

  test('each directive inherited on its own from http and server, the innermost level winning', () => {
    const path = file(`
    proxy_ssl_verify on;
    proxy_ssl_trusted_certificate ${pki.ca.cert};
    proxy_ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 8080;
        proxy_ssl_server_name on;
        proxy_ssl_name backend.test;
        location /a/ { proxy_pass https://127.0.0.1:8443; proxy_ssl_verify_depth 3; }
        location /b/ {
            proxy_pass https://127.0.0.1:8443;
            proxy_ssl_name $host;
            proxy_ssl_session_reuse off;
            proxy_ssl_ciphers HIGH;
            proxy_ssl_certificate ${client.cert};
            proxy_ssl_certificate_key ${lockedKey};
            proxy_ssl_password_file ${passwords};
        }
    }`);
    const [a, b] = loadConfigFile(path).http.servers[0]!.locations;
    assert.equal(a!.proxySsl.verify, true);
    assert.equal(a!.proxySsl.verifyDepth, 3);
    assert.equal(a!.proxySsl.serverName, true);
    assert.equal(a!.proxySsl.name, 'backend.test');
    assert.deepEqual(a!.proxySsl.protocols, ['TLSv1.2', 'TLSv1.3']);
    assert.equal(a!.proxySsl.sessionReuse, true);
    assert.match(a!.proxySsl.trustedCertificate ?? '', /BEGIN CERTIFICATE/);
    assert.equal(b!.proxySsl.verifyDepth, 1);
    assert.equal(b!.proxySsl.name, '$host');
    assert.equal(b!.proxySsl.sessionReuse, false);
    assert.equal(b!.proxySsl.ciphers, 'HIGH');
    assert.deepEqual(b!.proxySsl.passwords, ['wrong', 'secret']);
    assert.equal(b!.proxySsl.certificateFile?.path, client.cert);
    assert.equal(nginxT(path), 'loaded');
  });

  test('what nginx refuses of a location that speaks TLS, in its words', () => {
    const cases: readonly [string, string][] = [
      [
        server(`location / { proxy_pass https://127.0.0.1:8443; proxy_ssl_verify on; }`),
        'no proxy_ssl_trusted_certificate for proxy_ssl_verify',
      ],
      [
        server(`location / { proxy_pass https://127.0.0.1:8443; proxy_ssl_certificate ${client.cert}; }`),
        `no "proxy_ssl_certificate_key" is defined for certificate "${client.cert}"`,
      ],
      [
        server(`location / { proxy_ssl_verify maybe; }`),
        'invalid value "maybe" in "proxy_ssl_verify" directive, it must be "on" or "off"',
      ],
      [
        server(`location / { proxy_ssl_verify_depth x; }`),
        '"proxy_ssl_verify_depth" directive invalid number',
      ],
      [server(`location / { proxy_ssl_protocols TLSv9; }`), 'invalid value "TLSv9"'],
      [
        server(`location / { proxy_ssl_server_name on; proxy_ssl_server_name off; }`),
        '"proxy_ssl_server_name" directive is duplicate',
      ],
    ];
    for (const [http, text] of cases) {
      const path = file(http);
      assert.equal(ours(path).replace(/ in \S+:\d+$/, ''), text, http);
      assert.ok(nginxT(path).startsWith(text), `nginx: ${nginxT(path)}`);
    }
  });

  test('a key that no password opens fails the load at the key; the check waits for a location that speaks TLS', () => {
    const locked = (passwordFile: string, pass: string) =>
      server(`
        proxy_ssl_certificate ${client.cert};
        proxy_ssl_certificate_key ${lockedKey};
        proxy_ssl_password_file ${passwordFile};
        proxy_ssl_verify on;
        location / { proxy_pass ${pass}; }`);
    const refused = file(locked(wrongPasswords, 'https://127.0.0.1:8443'));
    assert.equal(
      ours(refused),
      `cannot load certificate key "${lockedKey}": PEM_read_bio_PrivateKey() failed in ${refused}:7`,
    );
    assert.match(nginxT(refused), /^cannot load certificate key/);
    // plain proxying builds no TLS context: nothing of it is checked, as in nginx
    assert.equal(ours(file(locked(wrongPasswords, 'http://127.0.0.1:8080'))), 'loaded');
  });

  test('what the replica cannot honour is refused with its place', () => {
    const cases: readonly [string, string][] = [
      [
        server(`location / { proxy_ssl_conf_command Options PrioritizeChaCha; }`),
        '"proxy_ssl_conf_command" is not supported by limitswitch',
      ],
      [
        server(`location / { proxy_ssl_certificate $arg_c; }`),
        'variables in "proxy_ssl_certificate" are not supported by limitswitch',
      ],
      [
        server(`location / { proxy_ssl_protocols SSLv3 TLSv1.2; }`),
        '"SSLv3" in "proxy_ssl_protocols" is not supported by limitswitch (not in its OpenSSL)',
      ],
    ];
    for (const [http, text] of cases) assert.equal(ours(file(http)).replace(/ in \S+:\d+$/, ''), text, http);
  });
});
