/**
 * A control plane whose Redis does not answer, as an operator reads its log: one warning naming the
 * store's URL and the reason, whatever calls fail (the zones' registration at start, the expiry
 * sweeper, API calls), no JavaScript stack for the expected fault, and API calls answered 503.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { controlPlane, controlPlaneServerOptions } from '../../src/control-plane/app.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { freePort } from '../helpers/free-port.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { ZONES } from './harness.ts';

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

const WARN = 40;
const ERROR = 50;

describe('a control plane on an unreachable Redis: its log', () => {
  const lines: LogLine[] = [];
  let app: FastifyInstance;
  let store: Store;
  let url: string;

  before(async () => {
    // nothing listens on a port just found free
    url = `redis://127.0.0.1:${await freePort()}`;
    store = openStore({ url });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line !== '') lines.push(JSON.parse(line));
        done();
      },
    });
    app = Fastify({ logger: { level: 'info', stream }, ...controlPlaneServerOptions() });
    await app.register(controlPlane, {
      store,
      keyvalZones: ZONES,
      expirySweepMs: 200,
    });
    await app.ready();
  });

  after(async () => {
    await app.close();
    await store.close();
  });

  /** Store calls `op` that failed, from the control plane's own metrics. */
  async function failedCalls(op: string): Promise<number> {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('limitswitch_store_request_duration_seconds_count{') &&
          l.includes(`op="${op}"`) &&
          l.includes('outcome="error"'),
      );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  }

  it('says the outage once, with the store and the reason, and no stack; API calls answer 503', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/9/http/keyvals/zone_one',
      payload: '{"a":"1"}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 503, res.body);
    // the zones' registration at start, this call, and the expiry sweeper's calls have all failed
    await waitFor(async () => (await failedCalls('expireDue')) >= 2, {
      timeoutMs: 15_000,
      intervalMs: 100,
      message: 'the expiry sweeper to run into the outage twice',
    });
    assert.ok((await failedCalls('registerZones')) >= 1);
    const warnings = lines.filter((line) => line.level >= WARN);
    const outage = warnings.filter((line) => /keyval store unavailable/.test(line.msg));
    assert.equal(outage.length, 1, JSON.stringify(warnings, null, 1));
    assert.ok(outage[0]!.msg.includes(url), outage[0]!.msg);
    assert.match(outage[0]!.msg, /connection refused/);
    assert.deepEqual(
      lines.filter((line) => line.level >= ERROR),
      [],
      'an unavailable store is no error of the control plane',
    );
    assert.doesNotMatch(JSON.stringify(lines), /"stack"/);
  });
});
