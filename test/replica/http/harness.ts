/**
 * Real servers and clients for the data-path tests: node:http upstreams that record what reached them,
 * a proxy on a free port, and a raw-socket client for what undici will not send or show (duplicate
 * headers, hop-by-hop headers, the status line's reason phrase, a connection closed without answer).
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import type { Decision } from '../../../src/replica/http/contract/decision.ts';
import { createProxyServer, type ProxyServer } from '../../../src/replica/http/proxy-server.ts';
import type { ProxyServerOptions } from '../../../src/replica/http/proxy-server-options.ts';
import type { UpstreamOptions } from '../../../src/replica/http/upstream/upstream-group.ts';
import { UpstreamSet } from '../../../src/replica/http/upstream/upstream-set.ts';
import { serverValue } from '../../../src/replica/http/wire/server-tokens.ts';

export interface UpstreamRecord {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, record: UpstreamRecord) => void;

export interface TestUpstream {
  readonly port: number;
  /** Requests whose body was read completely, in arrival order. */
  readonly requests: UpstreamRecord[];
  /** Requests whose head arrived (even if the body never completes). */
  readonly started: IncomingMessage[];
  /** Resolves with the next request whose head arrives. */
  nextStarted(): Promise<IncomingMessage>;
  /** Resolves with the body bytes of `req` once at least `bytes` of them arrived. */
  bodyReceived(req: IncomingMessage, bytes: number): Promise<string>;
  close(): Promise<void>;
}

/** The default answer: 200 with the request as JSON. */
export const echo: UpstreamHandler = (_req, res, record) => {
  const body = JSON.stringify(record);
  res.setHeader('content-type', 'application/json');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
};

/** An upstream on a free port; `handler` answers once the request body is read. */
export async function startUpstream(handler: UpstreamHandler = echo): Promise<TestUpstream> {
  const requests: UpstreamRecord[] = [];
  const started: IncomingMessage[] = [];
  const waiters: ((req: IncomingMessage) => void)[] = [];
  const bodies = new Map<IncomingMessage, { chunks: Buffer[]; check: (() => void)[] }>();
  const server = createServer((req, res) => {
    started.push(req);
    const chunks: Buffer[] = [];
    const progress = { chunks, check: [] as (() => void)[] };
    bodies.set(req, progress);
    waiters.shift()?.(req);
    req.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      for (const check of progress.check) check();
    });
    req.on('end', () => {
      const record: UpstreamRecord = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(record);
      handler(req, res, record);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    started,
    nextStarted: () => new Promise((resolve) => waiters.push(resolve)),
    bodyReceived: (req, bytes) =>
      new Promise((resolve) => {
        const progress = bodies.get(req)!;
        const check = () => {
          const body = Buffer.concat(progress.chunks);
          if (body.length >= bytes) resolve(body.toString('utf8'));
        };
        progress.check.push(check);
        check();
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TestProxy<D extends Decision> {
  readonly port: number;
  readonly proxy: ProxyServer<D>;
  readonly upstreams: UpstreamSet;
  close(): Promise<void>;
}

/** A proxy whose default upstream `backend` is the given servers. */
export async function startProxy<D extends Decision>(
  servers: readonly { port: number; weight?: number }[],
  options: Omit<ProxyServerOptions<D>, 'upstreams'>,
  upstreamOptions: Partial<UpstreamOptions> = {},
  listenHost = '127.0.0.1',
): Promise<TestProxy<D>> {
  const upstreams = new UpstreamSet(
    [
      {
        name: 'backend',
        servers: servers.map((s) => ({ host: '127.0.0.1', port: s.port, weight: s.weight ?? 1 })),
      },
    ],
    upstreamOptions,
  );
  const proxy = createProxyServer<D>({ defaultUpstream: 'backend', ...options, upstreams });
  const address = await proxy.listen(0, listenHost);
  return {
    port: address.port,
    proxy,
    upstreams,
    async close() {
      await proxy.close({ forceAfterMs: 2_000 });
      await upstreams.close();
    },
  };
}

export interface RawResponse {
  readonly status: number;
  /** The reason phrase exactly as sent (may be empty). */
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  header(name: string): string | undefined;
}

/** What a raw exchange ended with: a response, or a connection closed before any byte came back. */
export type RawOutcome = RawResponse | { readonly closedWithoutResponse: true };

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!(size > 0)) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** Sends `lines` (request line and headers, without the blank line) plus `body` on a fresh connection. */
export function rawRequest(port: number, lines: readonly string[], body = ''): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') reject(err);
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      if (text === '') {
        resolve({ closedWithoutResponse: true });
        return;
      }
      const headEnd = text.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = text.slice(0, headEnd).split('\r\n');
      const match = /^HTTP\/1\.1 (\d{3}) (.*)$/.exec(statusLine ?? '');
      if (!match) {
        reject(new Error(`bad status line ${JSON.stringify(statusLine)}`));
        return;
      }
      const headers = headerLines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon), line.slice(colon + 1).trim()] as const;
      });
      const find = (name: string) => headers.find(([n]) => n.toLowerCase() === name)?.[1];
      const rawBody = text.slice(headEnd + 4);
      resolve({
        status: Number(match[1]),
        reason: match[2]!,
        headers,
        body: find('transfer-encoding') === 'chunked' ? dechunk(rawBody) : rawBody,
        header: find,
      });
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

/** Narrows a raw outcome to a response, failing the test otherwise. */
export function responseOf(outcome: RawOutcome): RawResponse {
  if ('closedWithoutResponse' in outcome) throw new Error('the connection closed without a response');
  return outcome;
}

/** nginx's page for a status, with limitswitch in the tail (with its version: `server_tokens on`). */
export function nginxPage(title: string): string {
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n` +
    `<hr><center>${serverValue(true)}</center>\r\n</body>\r\n</html>\r\n`
  );
}
