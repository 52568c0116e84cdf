/**
 * `allow unix:` / `deny unix:` against real nginx: one configuration served by nginx and by a replica
 * process, the same requests over TCP to both, the same status — a `unix:` rule does not match an IP
 * client (it falls through to the next rule, or to no match: allowed), `all` does; a denied request
 * writes nginx's `access forbidden by rule` error-log line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { answerSummary } from '../helpers/answer-summary.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { waitFor } from '../helpers/wait-for.ts';

const http = (port: number) => `
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location /allow_all { allow all; return 200 "in\\n"; }
        location /allow_unix { allow unix:; return 200 "in\\n"; }
        location /deny_all { deny all; return 200 "in\\n"; }
        location /deny_unix { deny unix:; return 200 "in\\n"; }
        location /allow_unix_deny_all { allow unix:; deny all; return 200 "in\\n"; }
        location /deny_unix_allow_ip { deny unix:; allow 127.0.0.1; deny all; return 200 "in\\n"; }
        location /static_deny_unix { deny unix:; }
        location /static_deny_all { allow unix:; deny all; }
    }
`;

const PATHS = [
  '/allow_all',
  '/allow_unix',
  '/deny_all',
  '/deny_unix',
  '/allow_unix_deny_all',
  '/deny_unix_allow_ip',
  '/static_deny_unix',
  '/static_deny_all',
];

describe('allow/deny unix: for TCP clients: the replica answers as nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(http);
  });

  after(async () => {
    await both?.stop();
  });

  function send(port: number, path: string): Promise<string> {
    return answerSummary(`http://127.0.0.1:${port}${path}`);
  }

  test('statuses and bodies', async () => {
    for (const path of PATHS) {
      const fromNginx = await send(both.nginxPort, path);
      assert.equal(await send(both.replicaPort, path), fromNginx, path);
    }
  });

  test('a denied request writes the same error-log line', async () => {
    const expected = forbiddenLines(both.nginx.errorLog());
    // only /static_deny_all denies: `return` answers in the rewrite phase, before access rules run
    assert.equal(expected.length, 1, expected.join('\n'));
    // the replica's error log comes through a pipe: wait for its lines to arrive
    await waitFor(() => forbiddenLines(both.replica.process.stderr).length >= expected.length, {
      message: 'the replica to log as many lines',
    }).catch(() => undefined);
    assert.deepEqual(forbiddenLines(both.replica.process.stderr), expected);
  });
});

/** The access module's error-log lines, without time, pid, connection number and `host` (ports differ). */
function forbiddenLines(log: string): string[] {
  return log
    .split('\n')
    .filter((line) => line.includes('access forbidden'))
    .map((line) =>
      line
        .replace(/^\S+ \S+ /, '')
        .replace(/\d+#\d+: \*\d+ /, '')
        .replace(/, host: .*$/, ''),
    );
}
