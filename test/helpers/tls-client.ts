/**
 * One HTTPS request with the TLS knobs the differential tests turn: SNI (or none), client
 * certificate, protocol range, ciphers. Resolves with what the client saw — status, body, the
 * server certificate's CN and the protocol — or the handshake's failure.
 */
import { type Agent, request } from 'node:https';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';

export interface TlsRequest {
  /** The SNI name; absent: none is sent (the connection goes to 127.0.0.1). */
  readonly servername?: string;
  /** The Host header (default: the SNI name, else 127.0.0.1). */
  readonly host?: string;
  readonly path?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3';
  readonly maxVersion?: 'TLSv1.2' | 'TLSv1.3';
  readonly ciphers?: string;
  /** The signature algorithms offered (which of a server's certificates it can use). */
  readonly sigalgs?: string;
}

export type TlsAnswer =
  | {
      readonly status: number;
      readonly body: string;
      readonly serverCn: string;
      /** The server certificate's key type. */
      readonly keyType: 'ec' | 'rsa';
      readonly protocol: string;
    }
  | { readonly error: string };

export function tlsGet(port: number, options: TlsRequest): Promise<TlsAnswer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? '/',
        agent: false,
        rejectUnauthorized: false,
        headers: { host: options.host ?? options.servername ?? '127.0.0.1', connection: 'close' },
        ...(options.servername === undefined ? {} : { servername: options.servername }),
        ...(options.cert === undefined ? {} : { cert: options.cert, key: options.key }),
        ...(options.minVersion === undefined ? {} : { minVersion: options.minVersion }),
        ...(options.maxVersion === undefined ? {} : { maxVersion: options.maxVersion }),
        ...(options.ciphers === undefined ? {} : { ciphers: options.ciphers }),
        ...(options.sigalgs === undefined ? {} : { sigalgs: options.sigalgs }),
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        const serverCn = String(peer.subject?.CN ?? '');
        const keyType = (peer as { asn1Curve?: string }).asn1Curve === undefined ? 'rsa' : 'ec';
        const protocol = socket.getProtocol() ?? '';
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serverCn, keyType, protocol }));
      },
    );
    req.on('error', (err: Error & { code?: string }) => resolve({ error: err.code ?? err.message }));
    req.end();
  });
}

/** What a certificate swap test looks at: the answer, the certificate it came with, the connection. */
export interface FingerprintedAnswer {
  readonly status: number;
  readonly text: string;
  readonly fingerprint: string;
  /** The client's port: the same one means the same (kept) connection. */
  readonly localPort: number;
}

/** GET `path` on `cafe.example.com` (SNI) through `agent` (false: a new connection), trusting `ca`. */
export function fingerprintedGet(
  port: number,
  options: { readonly path: string; readonly ca: string; readonly agent: Agent | false },
): Promise<FingerprintedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: options.path,
        servername: 'cafe.example.com',
        ca: options.ca,
        agent: options.agent,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const fingerprint = socket.getPeerCertificate().fingerprint256;
        const localPort = socket.localPort ?? 0;
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, fingerprint, localPort }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** An HTTP/1.0 `GET` on a new connection offering `session`: the body, and the session the server gave. */
export function getOfferingSession(
  port: number,
  version: 'TLSv1.2' | 'TLSv1.3',
  session?: Buffer,
  path = '/',
  host = 'localhost',
): Promise<{ body: string; session: Buffer | null }> {
  return new Promise((resolve, reject) => {
    let given: Buffer | null = null;
    let text = '';
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      servername: host,
      rejectUnauthorized: false,
      minVersion: version,
      maxVersion: version,
      ...(session === undefined ? {} : { session }),
    });
    // TLSv1.3 sessions come after the handshake, with the answer
    socket.on('session', (s: Buffer) => {
      given ??= s;
    });
    socket.on('secureConnect', () => socket.write(`GET ${path} HTTP/1.0\r\nHost: ${host}\r\n\r\n`));
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve({ body: text.slice(text.indexOf('\r\n\r\n') + 4), session: given }));
    socket.on('error', reject);
  });
}
