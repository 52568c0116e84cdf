/**
 * A chunked body streamed to the server (`proxy_request_buffering off`, `proxy_http_version 1.1`),
 * side by side with nginx: what came with the head leaves with it as one chunk, and the chunks of one
 * later read of the client leave as one chunk too, the last chunk with them.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

/** The server's side: each connection's bytes, and a promise of the next connection. */
let server: Server;
let serverPort: number;
let nextConnection: (socket: Socket) => void = () => {};
let both: SideBySide;

before(async () => {
  server = createServer((socket) => nextConnection(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverPort = (server.address() as { port: number }).port;
  both = await startSideBySide(
    (port) => `
    server {
        listen 127.0.0.1:${port};
        proxy_request_buffering off;
        proxy_http_version 1.1;
        location / { proxy_pass http://127.0.0.1:${serverPort}; }
    }`,
  );
});

after(async () => {
  await both?.stop();
  await new Promise((resolve) => server.close(resolve));
});

/** Resolves once what `socket` received (from its start) ends with `end`; with all of it. */
function received(socket: Socket, seen: Buffer[], end: string): Promise<string> {
  return new Promise((resolve) => {
    const check = () => {
      const text = Buffer.concat(seen).toString('latin1');
      if (text.endsWith(end)) {
        socket.off('data', check);
        resolve(text);
      }
    };
    socket.on('data', check);
    check();
  });
}

for (const side of ['nginx', 'replica'] as const) {
  describe(`${side}: a chunked body streamed upstream`, () => {
    it('goes as one chunk per read of the client, what came with the head first', async () => {
      const upstream = new Promise<Socket>((resolve) => {
        nextConnection = resolve;
      });
      const client = connect(side === 'nginx' ? both.nginxPort : both.replicaPort, '127.0.0.1');
      const answer: Buffer[] = [];
      client.on('data', (chunk: Buffer) => answer.push(chunk));
      const closed = new Promise((resolve) => client.once('close', resolve));
      client.write(
        'POST / HTTP/1.1\r\nHost: a\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n' +
          '5\r\n01234\r\n4\r\nmany\r\n',
      );
      const socket = await upstream;
      const seen: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => seen.push(chunk));
      const first = await received(socket, seen, '01234many\r\n');
      assert.match(first, /\r\n\r\n9\r\n01234many\r\n$/);
      client.write('5\r\n56789\r\n4\r\nmany\r\n0\r\n\r\n');
      const all = await received(socket, seen, '0\r\n\r\n');
      assert.equal(all.slice(first.length), '9\r\n56789many\r\n0\r\n\r\n');
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK');
      await closed;
      assert.match(Buffer.concat(answer).toString('latin1'), /^HTTP\/1\.1 200 OK/);
    });
  });
}
