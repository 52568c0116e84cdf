/**
 * Several addresses on one port are each bound, as nginx binds them (`listen 127.0.0.1:P` and
 * `listen [::1]:P` are two sockets, each address finding its own server); an address beside a
 * wildcard of its family is not bound apart (the wildcard's socket takes it, the connection's local
 * address still picks the server). nginx and the replica side by side.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import type { Site } from '../../src/engine/http/site.ts';
import { bindAddresses } from '../../src/replica/listening/bind-addresses.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const body = (port: number) => `
    server {
        listen 127.0.0.1:${port};
        location / { return 200 "v4 $server_addr"; }
    }
    server {
        listen [::1]:${port};
        location / { return 200 "v6 $server_addr"; }
    }
`;

async function get(url: string): Promise<string> {
  const res = await request(url);
  return `${res.statusCode} ${await res.body.text()}`;
}

describe('listen addresses of one port: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
  });

  test('127.0.0.1 and [::1] on the same port, each its server', async () => {
    for (const host of ['127.0.0.1', '[::1]']) {
      const expected = await get(`http://${host}:${both.nginxPort}/`);
      assert.equal(await get(`http://${host}:${both.replicaPort}/`), expected);
    }
    assert.equal(await get(`http://[::1]:${both.replicaPort}/`), '200 v6 ::1');
  });
});

describe('bindAddresses', () => {
  const site = (...hosts: (string | null)[]): Site =>
    ({
      servers: hosts.map((host) => ({ listen: [{ host, port: 80, defaultServer: false }] })),
    }) as unknown as Site;

  test('each address once, in order', () => {
    assert.deepEqual(bindAddresses(site('127.0.0.1', '::1', '127.0.0.1'), 80), ['127.0.0.1', '::1']);
  });

  test('none beside a wildcard of its family', () => {
    assert.deepEqual(bindAddresses(site('127.0.0.1', null, '::1'), 80), ['0.0.0.0', '::1']);
    assert.deepEqual(bindAddresses(site('::1', '::', '10.0.0.1'), 80), ['::', '10.0.0.1']);
  });
});
