/**
 * Reference only: the straightforward node:http + undici Pool forwarder (`pool.request`, body piped; no
 * hook, no header rewriting, no error pages), as in the ecosystem survey's "bare node:http + undici
 * Pool" figure. It shows how much of the distance to nginx is the platform's and how much is the
 * replica's data path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstreamPort = Number(process.argv[2]);
const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { pipelining: 1 });

const server = createServer({ noDelay: true }, (req, res) => {
  const headers = { ...req.headers };
  delete headers.connection;
  pool.request({ path: req.url ?? '/', method: 'GET', headers, body: null }).then(
    ({ statusCode, headers: upstreamHeaders, body }) => {
      delete upstreamHeaders.connection;
      delete upstreamHeaders['keep-alive'];
      res.writeHead(statusCode, upstreamHeaders as Record<string, string>);
      body.pipe(res);
    },
    () => {
      res.statusCode = 502;
      res.end();
    },
  );
});
server.keepAliveTimeout = 75_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('disconnect', () => process.exit(0));
