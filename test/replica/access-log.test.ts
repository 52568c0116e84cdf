/**
 * `access_log` with `log_format` against real nginx: each writes its own files (named after the port
 * it listens on) for the same requests (`$upstream_bytes_received` is left out: the replica keeps its
 * upstream connections, so the server's answer head differs); the lines must be the same once the ports are the same —
 * the format's variables (upstream ones at the end of the request, `$status`, `$body_bytes_sent`,
 * `$request`, `$sent_http_connection`, `$sent_http_keep_alive`), a location's own lines replacing the server's, `off`, `if=`, nginx's escaping and `-`
 * for what is not found (after nginx-tests' proxy.t and proxy_variables.t).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

function body(dir: string, listen: number, upstream: number): string {
  return `
    log_format up '$uri $status $upstream_addr $upstream_status $upstream_response_length '
                  '$upstream_http_x_len "$http_x_quoted" $request';
    log_format sent escape=json '$uri $status $body_bytes_sent "$http_x_quoted"';
    log_format ka '$uri $sent_http_connection $sent_http_keep_alive';
    access_log ${dir}/server-${listen}.log sent;
    server {
        listen 127.0.0.1:${listen};
        location /up/ {
            proxy_pass http://127.0.0.1:${upstream};
            access_log ${dir}/up-${listen}.log up;
        }
        location /quiet/ {
            access_log off;
            return 200 "quiet\\n";
        }
        location /if/ {
            access_log ${dir}/if-${listen}.log sent if=$arg_log;
            return 204;
        }
        location /ka/ {
            keepalive_timeout 30s 9;
            access_log ${dir}/ka-${listen}.log ka;
            return 200 "ka\\n";
        }
        location / { return 200 "text\\n"; }
    }
`;
}

function upstreamServer(): Server {
  return createServer((_req, res) => {
    res.writeHead(200, { 'X-Len': '7', 'Content-Length': '7' });
    res.end('answer\n');
  });
}

async function get(port: number, target: string, quoted = ''): Promise<void> {
  const field = quoted === '' ? '' : `X-Quoted: ${quoted}\r\n`;
  const request = `GET ${target} HTTP/1.1\r\nHost: localhost\r\n${field}Connection: close\r\n\r\n`;
  await rawExchange(port, [request], { timeoutMs: 5000 });
}

describe('replica vs nginx: access_log and log_format', () => {
  const dir = new TempDir();
  const upstream = upstreamServer();
  let both: SideBySide;
  let ports: { nginx: number; replica: number };
  let upstreamPort = 0;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
    const listened: number[] = [];
    both = await startSideBySide((port) => {
      listened.push(port);
      return body(dir.path, port, upstreamPort);
    });
    // the replica's file is named after the port its configuration names (it listens elsewhere)
    const replicaNamed = listened.find((port) => port !== both.nginxPort)!;
    ports = { nginx: both.nginxPort, replica: replicaNamed };
  });

  after(async () => {
    upstream.close();
    dir.remove();
  });

  test('the same lines in the same files', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      await get(port, '/up/a?x=1', 'say "hi"\\');
      await get(port, '/quiet/');
      await get(port, '/if/?log=1');
      await get(port, '/if/?log=0');
      await get(port, '/other', 'caf\u00e9');
      // two on one connection: nginx 1.22 logs `close` for the kept one too (its log phase comes after
      // ngx_http_set_keepalive cleared r->keepalive)
      const kept = 'GET /ka/1 HTTP/1.1\r\nHost: localhost\r\n\r\n';
      await rawExchange(port, [kept, kept.replace('/ka/1', '/ka/2')], { timeoutMs: 1000 });
    }
    await both.stop();
    const read = (name: string, port: number) =>
      readFileSync(`${dir.path}/${name}-${port}.log`, 'latin1').replaceAll(String(port), 'PORT');
    for (const name of ['up', 'server', 'if', 'ka']) {
      assert.equal(read(name, ports.replica), read(name, ports.nginx), name);
    }
    assert.equal(
      read('up', ports.nginx),
      `/up/a 200 127.0.0.1:${upstreamPort} 200 7 7 "say \\x22hi\\x22\\x5C" GET /up/a?x=1 HTTP/1.1\n`,
    );
    assert.equal(read('if', ports.nginx), '/if/ 204 0 ""\n');
    assert.equal(read('ka', ports.nginx), '/ka/1 close -\n/ka/2 close -\n');
  });
});
