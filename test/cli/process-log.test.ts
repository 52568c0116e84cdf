/**
 * Issue 18 §3.12: the process log was pino JSON with numeric levels and epoch-ms times even on a
 * terminal, every API request was logged twice, `"ports":{"18081":18081}`, nothing was said when the
 * state file was loaded, and there was no `--log-level`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { prettyLine } from '../../src/cli/process-log.ts';
import { freePort } from '../helpers/free-port.ts';
import {
  freePorts,
  LimitswitchProcess,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;

describe('the process log', () => {
  const dir = new TempDir();
  let upstream: number;
  before(async () => {
    upstream = await freePort();
  });
  after(async () => {
    await stopAll();
    dir.remove();
  });

  const config = (port: number) =>
    dir.write(
      `nginx-${port}.conf`,
      `events {}\nhttp {\n    keyval_zone zone=switches:64k;\n    keyval $uri $switch zone=switches;\n    server {\n        listen 127.0.0.1:${port};\n        location / { proxy_pass http://127.0.0.1:${upstream}; }\n    }\n}\n`,
    );

  it('off a terminal: JSON lines with level names and ISO times; the listen addresses as bound', async () => {
    const [port] = await freePorts(1);
    const replica = await startReplica(config(port!), [], { status: false });
    const line = await replica.process.waitForLog('replica listening');
    assert.equal(line.level, 'info');
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(line.listen, [`127.0.0.1:${port}`]);
    assert.equal('ports' in line, false);
  });

  it('on a terminal: one readable line per event', async () => {
    // A control plane whose port is taken logs its first warning and exits; `script` gives it a
    // pseudo-terminal for stdout.
    const blocker = createServer();
    const port = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as AddressInfo).port)),
    );
    try {
      const run = spawnSync(
        'script',
        ['-qec', `${process.execPath} ${BIN} control-plane --listen 127.0.0.1:${port}`, '/dev/null'],
        { encoding: 'utf8', timeout: 60_000, env: { ...process.env, REDIS_URL: '', LIMITSWITCH_TOKENS: '' } },
      );
      const first = run.stdout.split(/\r?\n/)[0] ?? '';
      assert.match(
        first,
        /^\d\d:\d\d:\d\d\.\d{3} WARN {2}no --redis: keyvals live in this process only; other processes cannot share them$/,
        run.stdout,
      );
    } finally {
      blocker.close();
    }
  });

  it('the readable form: time, level, message, then key=value', () => {
    assert.equal(
      prettyLine(
        '{"level":"warn","time":"2026-12-02T14:03:07.412Z","name":"limitswitch-replica","id":"r1","listen":["0.0.0.0:8081"],"err":"two words","msg":"replica listening"}',
      ),
      '14:03:07.412 WARN  replica listening id=r1 listen=["0.0.0.0:8081"] err="two words"\n',
    );
  });

  it('one line per API request, with method, URL, status and time', async () => {
    const cp = await startControlPlane([]);
    assert.equal((await fetch(`${cp.url}/healthz`)).status, 200);
    const line = await cp.process.waitForLog('GET /healthz 200');
    assert.equal(line.level, 'info');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    assert.equal(
      cp.process.lines.filter((l) => String(l.msg).includes('/healthz') || l.msg === 'incoming request')
        .length,
      1,
    );
  });

  it('--log-level warn leaves the info lines out; a bad level is a usage error', async () => {
    const [port] = await freePorts(1);
    const quiet = new LimitswitchProcess('replica', ['-c', config(port!), '--log-level', 'warn']);
    // The memory-store warning comes; "replica listening" (info) never does.
    await quiet.waitForLog(
      'no --redis: keyvals live in this process only; other processes cannot share them',
    );
    await quiet.stop();
    assert.equal(
      quiet.lines.some((l) => l.level === 'info'),
      false,
      quiet.output(),
    );
    const bad = spawnSync(process.execPath, [BIN, 'replica', '-c', config(port!), '--log-level', 'loud'], {
      encoding: 'utf8',
    });
    assert.equal(bad.status, 1);
    assert.equal(
      bad.stderr,
      'limitswitch: --log-level loud: expected one of trace, debug, info, warn, error, fatal, silent\n',
    );
  });

  it('a replica that starts from its state file says so', async () => {
    const [port, storePort] = await freePorts(2);
    const stateFile = dir.write(
      'state.json',
      JSON.stringify({
        version: 2,
        savedAtMs: 0,
        revision: 7,
        commit: '',
        epoch: 'e1',
        zones: { switches: { '/coffee': { value: '1', expireAtMs: null } } },
        counters: [],
      }),
    );
    const replica = new LimitswitchProcess('replica', [
      '-c',
      config(port!),
      '--redis',
      `redis://127.0.0.1:${storePort}`,
      '--state-file',
      stateFile,
    ]);
    const line = await replica.waitForLog(
      `keyval store unreachable at start: enforcing the state file ${stateFile} (revision 7, 1 switches) until it answers`,
    );
    assert.equal(line.level, 'warn');
  });
});
