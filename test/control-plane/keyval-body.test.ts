import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePatchBody, parsePostBody } from '../../src/control-plane/keyval-body.ts';
import type { KeyvalZoneInfo } from '../../src/store/cluster-registry.ts';

const plain: KeyvalZoneInfo = { name: 'z', type: 'string', timeoutMs: null, sizeBytes: null };
const timed: KeyvalZoneInfo = { name: 't', type: 'string', timeoutMs: 1000, sizeBytes: null };
const ips: KeyvalZoneInfo = { name: 'i', type: 'ip', timeoutMs: null, sizeBytes: null };
const formatError = (message: string) => ({ code: 'KeyvalFormatError', status: 400, message });

describe('keyval bodies', () => {
  it('POST: strings, numbers as text, value objects; expiry from `expire` or the zone timeout', () => {
    assert.deepEqual(
      { ...parsePostBody({ a: 'x', b: 7, c: { value: -1.5 } }, plain, 100) },
      {
        a: { value: 'x', expireAtMs: null },
        b: { value: '7', expireAtMs: null },
        c: { value: '-1.5', expireAtMs: null },
      },
    );
    assert.deepEqual(
      { ...parsePostBody({ a: 'x', b: { value: 'y', expire: 50 } }, timed, 100) },
      {
        a: { value: 'x', expireAtMs: 1100 },
        b: { value: 'y', expireAtMs: 150 },
      },
    );
  });

  it('a key named __proto__ stays a key', () => {
    const entries = parsePostBody(JSON.parse('{"__proto__":"x"}'), plain, 0);
    assert.deepEqual(Object.keys(entries), ['__proto__']);
    assert.equal(Object.getPrototypeOf(entries), null);
  });

  it('refuses what needs the zone to judge, with NGINX’s texts (shapes are the schema’s: keyvals.test.ts)', () => {
    assert.throws(
      () => parsePostBody({ a: { value: 'v', expire: 10 } }, plain, 0),
      formatError('keyval timeout is not enabled'),
    );
    assert.throws(() => parsePostBody({ 'not-an-ip': '1' }, ips, 0), formatError('invalid key format'));
    assert.throws(() => parsePatchBody({ 'not-an-ip': null }, ips, 0), formatError('invalid key format'));
  });

  it('type=ip keys are addresses and CIDRs as nginx reads them', () => {
    for (const key of ['10.0.0.1', '010.0.0.1', '10.0.0.0/8', '::1', '::ffff:1.2.3.4/120', '255.255.255.255'])
      assert.deepEqual(Object.keys(parsePostBody({ [key]: '1' }, ips, 0)), [key]);
    for (const key of ['1.2.3', '10.0.0.0/33', 'fe80::1%eth0', ' 10.0.0.1', '10.0.0.1 ', '127.1', '1.2.3.4/'])
      assert.throws(() => parsePostBody({ [key]: '1' }, ips, 0), formatError('invalid key format'), key);
  });

  it('PATCH: null deletes', () => {
    assert.deepEqual(parsePatchBody({ a: null }, plain, 0), { key: 'a', entry: null });
    assert.deepEqual(parsePatchBody({ a: 'b' }, timed, 5), {
      key: 'a',
      entry: { value: 'b', expireAtMs: 1005 },
    });
  });
});
