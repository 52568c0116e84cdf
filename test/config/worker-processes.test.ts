import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkConfig } from '../../src/cli/check-command.ts';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadConfigText } from '../../src/config/index.ts';
import { workerCount } from '../../src/replica/workers/worker-runtime.ts';
import { refuseUnsharedWithWorkers } from '../../src/replica/workers/worker-zones.ts';

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

test('with workers, state nginx shares and the workers do not yet is refused at its line', () => {
  const config = (http: string) => loadConfigText(`worker_processes 2;\nhttp {\n${http}\n}\n`, 'nginx.conf');
  const refused = (http: string): string => {
    try {
      refuseUnsharedWithWorkers(config(http));
    } catch (err) {
      if (err instanceof ConfigError) return err.located;
      throw err;
    }
    return 'accepted';
  };
  // without `zone`, nginx's workers each count max_conns and the queue: so do ours
  assert.equal(refused('upstream u { server 127.0.0.1 max_conns=2; queue 10; }'), 'accepted');
  assert.equal(
    refused('upstream u {\n  server 127.0.0.1 max_conns=2;\n  queue 10;\n  zone u 64k;\n}'),
    `the queue of upstream "u" with a zone is kept per worker thread, not shared between the workers of "worker_processes" yet; use "worker_processes 1" with it in nginx.conf:6`,
  );
  // a zone's servers (max_conns, failures, the round robin) are shared
  assert.equal(refused('upstream u { server 127.0.0.1 max_conns=2; zone u 64k; }'), 'accepted');
  // the main thread admits every worker's requests to these
  assert.equal(
    refused(
      'api_rate_limit_zone create rate-limit=1/s rate-burst=4 parallel-requests=4 max-wait-duration=1s;',
    ),
    'accepted',
  );
  assert.equal(refused('priority_level_zone tight shares=1 limit_response=reject;'), 'accepted');

  assert.equal(refused('limit_req_zone $binary_remote_addr zone=s:1m rate=1r/s sync;'), 'accepted');
});

test('check refuses what a replica with worker threads refuses, at the same line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-check-'));
  try {
    const file = join(dir, 'nginx.conf');
    const zoned =
      'http {\n  upstream u {\n    server 127.0.0.1 max_conns=2;\n    queue 5;\n    zone u 64k;\n  }\n}\n';
    const lines: string[] = [];
    writeFileSync(file, `worker_processes auto;\n${zoned}`);
    assert.equal(
      checkConfig(file, (line) => lines.push(line)),
      1,
    );
    assert.match(
      lines[0]!,
      /\[emerg\] the queue of upstream "u" with a zone is kept per worker thread.* in .*nginx\.conf:6$/,
    );
    writeFileSync(file, `worker_processes 1;\n${zoned}`);
    assert.equal(
      checkConfig(file, () => {}),
      0,
    );
  } finally {
    rmSync(dir, { recursive: true });
  }
});
