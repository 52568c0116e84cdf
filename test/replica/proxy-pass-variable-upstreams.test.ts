/**
 * `proxy_pass` with variables finds the groups nginx's does (ngx_http_upstream_init_request): an
 * `upstream` block by name when no port is given, and the implicit group another `proxy_pass
 * host:port` made, by host and port (80 when none); any other host is "no resolver defined", a 502.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { UpstreamNames } from '../../src/replica/policy/proxy-targets.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from './http/harness.ts';

describe('UpstreamNames: what a variable proxy_pass looks its host up in', () => {
  const names = new UpstreamNames();
  names.addBlock('Tea');
  names.addImplicit({ host: 'localhost', port: 8081, weight: 1 }, 'localhost:8081');
  names.addImplicit({ host: 'beans.local', port: 80, weight: 1 }, 'beans.local:80');
  names.addImplicit({ host: '::1', port: 8082, weight: 1 }, '::1:8082');

  it('an upstream block by name, in any case, only without a port', () => {
    assert.equal(names.find('tea'), 'Tea');
    assert.equal(names.find('TEA'), 'Tea');
    assert.equal(names.find('tea:80'), null);
  });

  it('an implicit group by host and port, 80 when none is given', () => {
    assert.equal(names.find('localhost:8081'), 'localhost:8081');
    assert.equal(names.find('LocalHost:8081'), 'localhost:8081');
    assert.equal(names.find('localhost:8082'), null);
    assert.equal(names.find('localhost'), null);
    assert.equal(names.find('beans.local'), 'beans.local:80');
    assert.equal(names.find('beans.local:80'), 'beans.local:80');
    assert.equal(names.find('[::1]:8082'), '::1:8082');
    assert.equal(names.find(''), null);
  });
});

describe('replica: proxy_pass http://$arg_b/ reaching an implicit upstream', () => {
  let upstream: TestUpstream;
  let replica: Replica;
  let port: number;

  before(async () => {
    upstream = await startUpstream();
    ({ replica, port } = await startInProcessReplica(
      'proxy-pass-variable-upstreams',
      `events {}
http {
    server {
        listen 80;
        location / { proxy_pass http://localhost:${upstream.port}/stub; }
        location /var { proxy_pass http://$arg_b/stub; }
    }
}
`,
    ));
  });

  after(async () => {
    await replica?.close();
    await upstream?.close();
  });

  it('goes to the group the other proxy_pass made', async () => {
    const res = await request(`http://127.0.0.1:${port}/var?b=localhost:${upstream.port}`);
    assert.equal(res.statusCode, 200);
    const record = (await res.body.json()) as UpstreamRecord;
    assert.equal(record.url, '/stub');
  });

  it('a host:port no proxy_pass names is a 502 (no resolver)', async () => {
    const res = await request(`http://127.0.0.1:${port}/var?b=localhost:1`);
    assert.equal(res.statusCode, 502);
    await res.body.dump();
  });
});

describe('replica and nginx: proxy_pass http://$arg_b/ to an IP address, no resolver needed', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(
      (port) => `
    server {
        listen 127.0.0.1:${port};
        location /var { proxy_pass http://$arg_b/t; }
        location /t { return 200 "t $server_addr:$server_port"; }
    }`,
    );
  });

  after(async () => {
    await both?.stop();
  });

  for (const side of ['nginx', 'replica'] as const) {
    it(`${side}: an IPv4 address with a port is connected to as it is`, async () => {
      const port = side === 'nginx' ? both.nginxPort : both.replicaPort;
      const res = await request(`http://127.0.0.1:${port}/var?b=127.0.0.1:${port}`);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), `t 127.0.0.1:${port}`);
    });
  }
});

describe('replica: a listen port range serves each of its ports', () => {
  let replica: Replica;
  let ports: number[];

  before(async () => {
    ({ replica } = await startInProcessReplica(
      'listen-port-range',
      `events {}
http {
    server {
        listen 80;
        listen 127.0.0.1:8182-8183;
        location /var { proxy_pass http://$arg_b/t; }
        location /t { return 200 "t $server_port"; }
    }
}
`,
      { portMap: new Map([80, 8182, 8183].map((port) => [port, 0])) },
    ));
    ports = [8182, 8183].map((port) => replica.ports.get(port)!);
  });

  after(async () => {
    await replica?.close();
  });

  it('both ports answer, and are reached through a variable proxy_pass', async () => {
    for (const [i, port] of ports.entries()) {
      const res = await request(`http://127.0.0.1:${replica.ports.get(80)}/var?b=127.0.0.1:${port}`);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), `t ${8182 + i}`);
    }
  });
});
