/**
 * Inheritance: a level inherits the enclosing `limit_req` list only when it has no `limit_req` of its own
 * (lists are never merged); `limit_req_status` and `limit_req_dry_run` are inherited one by one. Every
 * zone allows one request per minute per client, so "which zones apply" shows as pass/reject, and each
 * scenario uses its own client address.
 */
import { conformanceCase } from '../helpers/conformance-case.ts';

const http = (port: number) => `
    limit_req_zone $binary_remote_addr zone=http_level:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=srv:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=loc:1m rate=1r/m;

    limit_req zone=http_level;

    server {
        listen 127.0.0.1:${port};
        server_name inherit.example;

        limit_req zone=srv;
        limit_req_status 429;

        location /inherits/ {
        }
        location /own/ {
            limit_req zone=loc;
        }
        location /dry/ {
            limit_req_dry_run on;
        }
    }

    server {
        listen 127.0.0.1:${port};
        server_name plain.example;

        location / {
        }
    }
`;

const H = 'inherit.example';
const pass = (zone: string) => ({ code: 200, status: 'PASSED', zone }) as const;

conformanceCase({
  name: 'inheritance: a location list replaces the server list; status and dry run are inherited',
  http,
  steps: [
    // A location without limit_req gets the server's list (not http's) and the server's 429.
    { at: 0, addr: '10.0.6.1', host: H, uri: '/inherits/a.html', expect: pass('srv') },
    {
      at: 0,
      addr: '10.0.6.1',
      host: H,
      uri: '/inherits/a.html',
      pipelined: true,
      expect: { code: 429, status: 'REJECTED', zone: 'srv' },
    },
    // A location with its own limit_req: only `loc` applies (srv, which would reject this client now,
    // is not merged in); the status 429 is still inherited.
    { at: 100, addr: '10.0.6.1', host: H, uri: '/own/a.html', expect: pass('loc') },
    {
      at: 200,
      addr: '10.0.6.1',
      host: H,
      uri: '/own/b.html',
      expect: { code: 429, status: 'REJECTED', zone: 'loc' },
    },
    // Dry run set in the location, limits inherited from the server.
    { at: 300, addr: '10.0.6.2', host: H, uri: '/dry/a.html', expect: pass('srv') },
    {
      at: 300,
      addr: '10.0.6.2',
      host: H,
      uri: '/dry/a.html',
      pipelined: true,
      expect: { code: 200, status: 'REJECTED_DRY_RUN', zone: 'srv' },
    },
    // No location matches: the request is served with the server level's settings.
    { at: 400, addr: '10.0.6.3', host: H, uri: '/elsewhere.html', expect: pass('srv') },
    {
      at: 400,
      addr: '10.0.6.3',
      host: H,
      uri: '/elsewhere.html',
      pipelined: true,
      expect: { code: 429, status: 'REJECTED', zone: 'srv' },
    },
    // A server without limit_req inherits the http-level list and the default status 503.
    { at: 500, addr: '10.0.6.4', host: 'plain.example', uri: '/index.html', expect: pass('http_level') },
    {
      at: 500,
      addr: '10.0.6.4',
      host: 'plain.example',
      uri: '/index.html',
      pipelined: true,
      expect: { code: 503, status: 'REJECTED', zone: 'http_level' },
    },
  ],
});
