import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccessList } from '../../../src/engine/net/access-list.ts';

test('AccessList: `unix:` rules match only UNIX-domain clients, `all` matches them too', () => {
  const unixOnly = new AccessList([{ action: 'deny', from: 'unix:' }]);
  assert.equal(unixOnly.allows('unix:'), false);
  assert.equal(unixOnly.allows('127.0.0.1'), true);
  assert.equal(unixOnly.allows('::1'), true);

  const ipFirst = new AccessList([
    { action: 'allow', from: '0.0.0.0/0' },
    { action: 'allow', from: '::/0' },
    { action: 'deny', from: 'all' },
  ]);
  assert.equal(ipFirst.allows('unix:'), false, 'IP rules pass over a UNIX-domain client');
  assert.equal(ipFirst.allows('10.0.0.1'), true);

  const unixThenAll = new AccessList([
    { action: 'allow', from: 'unix:' },
    { action: 'deny', from: 'all' },
  ]);
  assert.equal(unixThenAll.allows('unix:'), true);
  assert.equal(unixThenAll.allows('10.0.0.1'), false);
  assert.equal(new AccessList([{ action: 'deny', from: 'all' }]).allows('unix:'), false);
  assert.throws(() => new AccessList([{ action: 'deny', from: 'unix:/run/x.sock' }]), {
    name: 'RangeError',
    message: 'invalid parameter "unix:/run/x.sock"',
  });
});
