import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfig } from '../../src/cli/check-command.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadConfigText } from '../../src/config/index.ts';
import { workerCount } from '../../src/replica/workers/worker-runtime.ts';

const located = (text: string): string => {
  try {
    loadConfigText(text, 'nginx.conf');
  } catch (err) {
    if (err instanceof ConfigError) return err.located;
    throw err;
  }
  assert.fail('expected a configuration error');
};

test('worker_processes: a number or auto, where it was written; none means one', () => {
  const two = loadConfigText('worker_processes 2;\nevents {}\n', 'nginx.conf');
  assert.deepEqual(two.workerProcesses, { count: 2, source: { file: 'nginx.conf', line: 1 } });
  assert.equal(workerCount(two.workerProcesses), 2);
  const auto = loadConfigText('events {}\nworker_processes auto;\n', 'nginx.conf');
  assert.equal(auto.workerProcesses?.count, 'auto');
  assert.equal(workerCount(auto.workerProcesses, 6), 6, 'auto: the cores of the machine it runs on');
  assert.equal(workerCount(auto.workerProcesses, 96), 31, 'at most 31');
  const none = loadConfigText('events {}\n', 'nginx.conf');
  assert.equal(none.workerProcesses, undefined);
  assert.equal(workerCount(none.workerProcesses), 1);
});

test('worker_processes: nginx’s messages for what nginx refuses; 0 and more than 31 refused too', () => {
  assert.equal(
    located('worker_processes two;\n'),
    '"worker_processes" directive invalid value in nginx.conf:1',
  );
  assert.equal(
    located('worker_processes 2;\nworker_processes 2;\n'),
    '"worker_processes" directive is duplicate in nginx.conf:2',
  );
  assert.match(
    located('worker_processes 0;\n'),
    /"worker_processes" 0: a replica serves with 1 to 31 workers \(or auto\) in nginx\.conf:1/,
  );
  assert.match(located('worker_processes 32;\n'), /1 to 31 workers/);
  assert.equal(
    located('http { worker_processes 2; }\n'),
    '"worker_processes" directive is not allowed here in nginx.conf:1',
  );
});

test('check accepts with worker threads every zone a replica shares between them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-check-'));
  try {
    const file = join(dir, 'nginx.conf');
    writeFileSync(
      file,
      `worker_processes auto;
http {
  upstream u {
    server 127.0.0.1 max_conns=2;
    queue 5;
    zone u 64k;
  }
  limit_req_zone $binary_remote_addr zone=s:1m rate=1r/s sync;
  api_rate_limit_zone create rate-limit=1/s rate-burst=4 parallel-requests=4 max-wait-duration=1s;
  priority_level_zone tight shares=1 limit_response=reject;
}
`,
    );
    const lines: string[] = [];
    assert.equal(
      checkConfig(file, (line) => lines.push(line)),
      0,
      lines.join('\n'),
    );
  } finally {
    rmSync(dir, { recursive: true });
  }
});
