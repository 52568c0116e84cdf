/**
 * A `server_name ~regex` that selects the server leaves the request its captures, as
 * ngx_http_find_virtual_server's ngx_http_regex_exec does: `(?<name>…)` and `(?P<name>…)` become
 * variables for the rest of the request, its groups are `$1`… until a location regex matches (which
 * leaves the named ones alone). Matched against the host lower-cased. And `$server_name` is the
 * first name without the dot of a `.example.com` one. nginx and the replica side by side on the
 * same configuration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const body = (port: number) => `
    server {
        listen ${port};
        server_name localhost;
        location / { return 200 "default [$1]"; }
    }
    server {
        listen ${port};
        server_name ~^(?P<name>[a-z]+)\\Q.example.com\\E$;
        location / { return 200 "P [$name] [$1]"; }
        location ~ ^/(re)gex { return 200 "location [$name] [$1]"; }
    }
    server {
        listen ${port};
        server_name "~^(?<site>www\\p{N}+)\\.(example)\\.net$";
        location / { return 200 "angle [$site] [$1] [$2] [$server_name]"; }
    }
    server {
        listen ${port};
        server_name .dot.example.com;
        location / { return 200 "dot [$server_name] [$host]"; }
    }
`;

const HOSTS: readonly [string, string][] = [
  ['blah.example.com', '/'],
  ['BLAH.EXAMPLE.COM', '/'],
  ['blah.example.com', '/regex'],
  ['www01.example.net', '/'],
  ['WWW01.Example.Net:8080', '/'],
  ['other.example.org', '/'],
  ['www.dot.example.com', '/'],
  ['dot.example.com', '/'],
];

async function get(port: number, host: string, path: string): Promise<string> {
  const res = await request(`http://127.0.0.1:${port}${path}`, { headers: { host } });
  return `${res.statusCode} ${await res.body.text()}`;
}

describe('server_name regex captures: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
  });

  for (const [host, path] of HOSTS) {
    test(`Host ${host}, ${path}`, async () => {
      assert.equal(await get(both.replicaPort, host, path), await get(both.nginxPort, host, path));
    });
  }

  test('the answers are what the cases are named for', async () => {
    assert.equal(await get(both.replicaPort, 'BLAH.EXAMPLE.COM', '/'), '200 P [blah] [blah]');
    assert.equal(await get(both.replicaPort, 'blah.example.com', '/regex'), '200 location [blah] [re]');
    assert.equal(
      await get(both.replicaPort, 'www01.example.net', '/'),
      '200 angle [www01] [www01] [example] [~^(?<site>www\\p{N}+)\\.(example)\\.net$]',
    );
    assert.equal(
      await get(both.replicaPort, 'www.dot.example.com', '/'),
      '200 dot [dot.example.com] [www.dot.example.com]',
    );
  });
});
