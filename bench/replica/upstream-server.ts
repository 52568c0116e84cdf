/**
 * The benchmark's upstream: a bare node:http server answering `{"hello":"world"}`, in its own process.
 * Reports its port to the parent over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const BODY = Buffer.from('{"hello":"world"}');

const server = createServer({ noDelay: true }, (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
  res.end(BODY);
});
// Longer than any run, so keep-alive connections from nginx and the proxies are never recycled mid-run.
server.keepAliveTimeout = 600_000;
server.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
process.on('disconnect', () => process.exit(0));
