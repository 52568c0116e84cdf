/**
 * The CA names a server sends in its CertificateRequest are its `ssl_client_certificate` file's, each
 * once however often the file repeats it (SSL_load_client_CA_file), at the replica as at nginx.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../../helpers/side-by-side.ts';
import { TestPki } from '../../helpers/tls-certs.ts';

const pki = new TestPki();
const server = pki.server('server', ['localhost']);
const twice = join(pki.dir, 'ca-twice.crt');
writeFileSync(twice, pki.read(pki.ca.cert) + pki.read(pki.ca.cert));

const body = (port: number) => `
    server {
        listen ${port} ssl;
        ssl_certificate ${server.cert};
        ssl_certificate_key ${server.key};
        ssl_client_certificate ${twice};
        ssl_verify_client optional;
        location / { return 200 "$ssl_client_verify"; }
    }`;

/** The names `openssl s_client` lists under "Acceptable client certificate CA names". */
function caNames(port: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-tls1_2'],
      { timeout: 10_000 },
      (error, stdout) => {
        if (error !== null && stdout === '') return reject(error);
        const lines = stdout.split('\n');
        const start = lines.indexOf('Acceptable client certificate CA names');
        const names: string[] = [];
        for (
          let i = start + 1;
          start !== -1 && i < lines.length && !/^(---|Requested|Client|Peer|Shared)/.test(lines[i]!);
          i++
        )
          names.push(lines[i]!);
        resolve(names);
      },
    );
    child.stdin?.end();
  });
}

describe('client CA names: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
    pki.remove();
  });

  test('a CA its file names twice is sent once', async () => {
    const expected = await caNames(both.nginxPort);
    assert.deepEqual(expected, ['O = Limitswitch Test, CN = Test CA']);
    assert.deepEqual(await caNames(both.replicaPort), expected);
  });
});
