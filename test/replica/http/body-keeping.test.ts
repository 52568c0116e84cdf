/**
 * Where a body read whole stays (client-body.ts's `bodyKeeping`, ngx_http_read_client_request_body's
 * rule): a declared length under `client_body_buffer_size` and a quarter in memory, a chunked one
 * while it fits the buffer, every one in a file under `client_body_in_file_only`; without
 * `client_body_temp_path`, the files go to the system's temporary folder (a replica's prefix is often
 * read-only).
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NGINX_CLIENT_TIMERS } from '../../../src/engine/http/client-timers.ts';
import { bodyKeeping } from '../../../src/replica/http/upstream/client-body.ts';

const timers = { ...NGINX_CLIENT_TIMERS, bodyBufferBytes: 2048 };

test('a declared length under the buffer and a quarter stays in memory, a larger one goes to a file', () => {
  assert.equal(bodyKeeping(timers, 2559).memoryBytes, 2559);
  assert.equal(bodyKeeping(timers, 2560).memoryBytes, 0);
});

test('a chunked body stays in memory while it fits the buffer', () => {
  assert.equal(bodyKeeping(timers, -1).memoryBytes, 2048);
});

test('client_body_in_file_only: every body in a file, kept or cleaned', () => {
  for (const fileOnly of ['on', 'clean'] as const) {
    const keeping = bodyKeeping({ ...timers, bodyInFileOnly: fileOnly }, 10);
    assert.deepEqual([keeping.memoryBytes, keeping.fileOnly], [-1, fileOnly]);
  }
});

test('the files go to client_body_temp_path, else to the system temporary folder', () => {
  assert.deepEqual(bodyKeeping(timers, 10).tempPath, {
    path: join(tmpdir(), 'limitswitch-client-body'),
    levels: [],
  });
  const temp = { path: '/var/spool/body', levels: [1, 2] };
  assert.equal(bodyKeeping({ ...timers, bodyTempPath: temp }, 10).tempPath, temp);
});
