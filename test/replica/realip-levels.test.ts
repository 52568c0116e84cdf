/**
 * realip as nginx runs it per request: at POST_READ with the settings of the server the Host chose,
 * at PREACCESS with the location's (after its rewrite phase: a `return` there still sees the peer);
 * a custom `real_ip_header`, `X-Forwarded-For` over several lines with and without
 * `real_ip_recursive`, `$realip_remote_addr` and `$realip_remote_port` (the peer's), `$remote_port`
 * empty when the header's address has none. nginx and the replica side by side.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const root = mkdtempSync(join(tmpdir(), 'limitswitch-realip-'));
writeFileSync(join(root, 'index.html'), '');
for (const name of ['custom', '1', '2', 'plain']) writeFileSync(join(root, name), '');

const SEEN = '"$remote_addr|$remote_port|$realip_remote_addr|$realip_remote_port"';

// the oracle's own http level says \`real_ip_header X-Forwarded-For\`: each server says its own
const body = (port: number) => `
    add_header X-Seen ${SEEN};
    set_real_ip_from 127.0.0.1/32;
    set_real_ip_from 10.0.1.0/24;
    server {
        listen ${port};
        server_name localhost;
        root ${root};
        real_ip_header X-Real-IP;
        location / { }
        location /custom { real_ip_header X-Real-IP-Custom; }
        location /1 { real_ip_header X-Forwarded-For; real_ip_recursive off; }
        location /2 { real_ip_header X-Forwarded-For; real_ip_recursive on; }
        location /returned { real_ip_header X-Real-IP-Custom; return 200 ${SEEN}; }
    }
    server {
        listen ${port};
        server_name by-server;
        root ${root};
        real_ip_header X-Forwarded-For;
        location / { }
        location /plain { real_ip_header X-Real-IP-Custom; }
        location /returned { return 200 ${SEEN}; }
    }
`;

/** Raw request lines (several X-Forwarded-For lines stay several); the answer's X-Seen, or its body. */
function seen(port: number, path: string, host: string, lines: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${path} HTTP/1.0\r\nHost: ${host}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`),
    );
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => {
      const head = text.slice(0, text.indexOf('\r\n\r\n'));
      const header = /^X-Seen: (.*)$/im.exec(head)?.[1];
      // the peer's port differs between the two connections: only whether there is one is compared
      const value = header ?? `body ${text.slice(head.length + 4)}`;
      resolve(value.replace(/\|\d+$/, '|port').replace(/^(body )?127\.0\.0\.1\|\d+\|/, '$1127.0.0.1|port|'));
    });
    socket.on('error', reject);
  });
}

const CASES: readonly [string, string, string, readonly string[]][] = [
  ['X-Real-IP at the server level', '/', 'localhost', ['X-Real-IP: 192.0.2.1']],
  ['a custom header in the location', '/custom', 'localhost', ['X-Real-IP-Custom: 192.0.2.1:81']],
  ['X-Forwarded-For, not recursive', '/1', 'localhost', ['X-Forwarded-For: 192.0.2.1, 10.0.1.1, 127.0.0.1']],
  ['X-Forwarded-For, recursive', '/2', 'localhost', ['X-Forwarded-For: 10.0.1.1, 192.0.2.1, 127.0.0.1']],
  [
    'X-Forwarded-For lines, not recursive',
    '/1',
    'localhost',
    ['X-Forwarded-For: 192.0.2.1', 'X-Forwarded-For: 127.0.0.1, 10.0.1.1'],
  ],
  [
    'X-Forwarded-For lines, recursive',
    '/2',
    'localhost',
    ['X-Forwarded-For: 10.0.1.1', 'X-Forwarded-For: 192.0.2.1', 'X-Forwarded-For: 127.0.0.1'],
  ],
  [
    'return in the rewrite phase, before the location sets it',
    '/returned',
    'localhost',
    ['X-Real-IP-Custom: 192.0.2.1'],
  ],
  [
    'the server chosen by Host sets it first',
    '/plain',
    'by-server',
    ['X-Forwarded-For: 192.0.2.7', 'X-Real-IP-Custom: 192.0.2.9'],
  ],
  ['set at POST_READ: a return sees it', '/returned', 'by-server', ['X-Forwarded-For: 192.0.2.7']],
  [
    'the location level only where the server level found nothing',
    '/plain',
    'by-server',
    ['X-Real-IP-Custom: 192.0.2.9'],
  ],
];

describe('realip per server and location: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  for (const [name, path, host, lines] of CASES) {
    test(name, async () => {
      const expected = await seen(both.nginxPort, path, host, lines);
      assert.equal(await seen(both.replicaPort, path, host, lines), expected);
    });
  }

  test('the answers are what the cases are named for', async () => {
    const port = both.replicaPort;
    assert.equal(
      await seen(port, '/custom', 'localhost', ['X-Real-IP-Custom: 192.0.2.1:81']),
      '192.0.2.1|81|127.0.0.1|port',
    );
    assert.equal(
      await seen(port, '/1', 'localhost', [
        'X-Forwarded-For: 192.0.2.1',
        'X-Forwarded-For: 127.0.0.1, 10.0.1.1',
      ]),
      '10.0.1.1||127.0.0.1|port',
    );
    assert.equal(
      await seen(port, '/2', 'localhost', [
        'X-Forwarded-For: 10.0.1.1',
        'X-Forwarded-For: 192.0.2.1',
        'X-Forwarded-For: 127.0.0.1',
      ]),
      '192.0.2.1||127.0.0.1|port',
    );
    assert.equal(
      await seen(port, '/returned', 'localhost', ['X-Real-IP-Custom: 192.0.2.1']),
      '127.0.0.1|port|127.0.0.1|port',
    );
    assert.equal(
      await seen(port, '/plain', 'by-server', ['X-Forwarded-For: 192.0.2.7', 'X-Real-IP-Custom: 192.0.2.9']),
      '192.0.2.7||127.0.0.1|port',
    );
  });
});
