/**
 * One HTTPS request with the TLS knobs the differential tests turn: SNI (or none), client
 * certificate, protocol range, ciphers. Resolves with what the client saw — status, body, the
 * server certificate's CN and the protocol — or the handshake's failure.
 */
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';

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
