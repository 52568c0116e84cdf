/**
 * Certificates for TLS tests, made with the `openssl` command in a temporary folder: a CA, server
 * certificates for given names (RSA or ECDSA), and client certificates signed by the CA or by a
 * second, untrusted CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CertFiles {
  readonly cert: string;
  readonly key: string;
}

export class TestPki {
  readonly dir = mkdtempSync(join(tmpdir(), 'limitswitch-pki-'));
  readonly ca: CertFiles;
  readonly otherCa: CertFiles;

  constructor() {
    this.ca = this.#selfSigned('ca', '/O=Limitswitch Test/CN=Test CA');
    this.otherCa = this.#selfSigned('other-ca', '/O=Elsewhere/CN=Other CA');
  }

  /** A server certificate for `names` (the first is the CN), signed by the CA. */
  server(file: string, names: readonly string[], keyType: 'rsa' | 'ec' = 'rsa'): CertFiles {
    return this.#signed(file, `/CN=${names[0]}`, this.ca, keyType, names);
  }

  /** A client certificate with the subject `subject` (`/O=Tenant A/CN=alice`). */
  client(file: string, subject: string, by: 'ca' | 'other' = 'ca'): CertFiles {
    return this.#signed(file, subject, by === 'ca' ? this.ca : this.otherCa, 'rsa', []);
  }

  read(path: string): string {
    return readFileSync(path, 'utf8');
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  #selfSigned(file: string, subject: string): CertFiles {
    const files = this.#paths(file);
    openssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      subject,
      '-keyout',
      files.key,
      '-out',
      files.cert,
    ]);
    return files;
  }

  #signed(
    file: string,
    subject: string,
    ca: CertFiles,
    keyType: 'rsa' | 'ec',
    names: readonly string[],
  ): CertFiles {
    const files = this.#paths(file);
    const csr = join(this.dir, `${file}.csr`);
    const key =
      keyType === 'rsa'
        ? ['-newkey', 'rsa:2048']
        : ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];
    openssl(['req', '-new', ...key, '-nodes', '-subj', subject, '-keyout', files.key, '-out', csr]);
    const ext = join(this.dir, `${file}.ext`);
    writeFileSync(
      ext,
      names.length === 0
        ? 'extendedKeyUsage=clientAuth\n'
        : `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}\n`,
    );
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.cert,
      '-CAkey',
      ca.key,
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      ext,
      '-out',
      files.cert,
    ]);
    return files;
  }

  #paths(file: string): CertFiles {
    return { cert: join(this.dir, `${file}.crt`), key: join(this.dir, `${file}.key`) };
  }
}

function openssl(args: readonly string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}
