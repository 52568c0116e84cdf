/** The status writer: writes only what differs, and keeps a condition's lastTransitionTime while it holds. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { StatusUpdate } from '../../../src/k8s/gateway/translate-gateway.ts';
import type { KubeObject } from '../../../src/k8s/objects.ts';
import { GatewayStatusWriter } from '../../../src/k8s/watch/gateway-status-writer.ts';

test('nothing is written when the object carries the status already; a changed condition gets a new time, the others keep theirs', async () => {
  const puts: { name: string; body: { status: Record<string, unknown> } }[] = [];
  const api = {
    replaceNamespacedCustomObjectStatus: async (p: {
      name: string;
      body: { status: Record<string, unknown> };
    }) => {
      puts.push(p);
      return p.body;
    },
  } as unknown as CustomObjectsApi;
  let clock = Date.UTC(2026, 11, 2, 10, 0, 0);
  const writer = new GatewayStatusWriter(api, undefined, () => new Date(clock));
  let stored: KubeObject & { status?: Record<string, unknown> } = {
    kind: 'Gateway',
    metadata: { name: 'cafe', namespace: 'default', uid: 'u1', resourceVersion: '1' },
  };
  const update = (programmed: boolean): StatusUpdate => ({
    kind: 'Gateway',
    namespace: 'default',
    name: 'cafe',
    status: {
      conditions: [
        { type: 'Accepted', status: 'True', reason: 'Accepted', message: 'ok' },
        { type: 'Programmed', status: programmed ? 'True' : 'False', reason: 'x', message: 'y' },
      ],
    },
  });
  const write = async (u: StatusUpdate) => {
    await writer.write([u], () => stored);
    const last = puts.at(-1);
    if (last)
      stored = {
        ...stored,
        status: last.body.status,
        metadata: { ...stored.metadata, resourceVersion: String(puts.length + 1) },
      };
  };
  await write(update(true));
  assert.equal(puts.length, 1);
  const times = (puts[0]!.body.status.conditions as { lastTransitionTime: string }[]).map(
    (c) => c.lastTransitionTime,
  );
  assert.deepEqual(times, ['2026-12-02T10:00:00Z', '2026-12-02T10:00:00Z']);
  clock += 60_000;
  await write(update(true));
  assert.equal(puts.length, 1, 'the same status is not written again');
  await write(update(false));
  assert.equal(puts.length, 2);
  const after = (puts[1]!.body.status.conditions as { type: string; lastTransitionTime: string }[]).map(
    (c) => `${c.type} ${c.lastTransitionTime}`,
  );
  assert.deepEqual(after, ['Accepted 2026-12-02T10:00:00Z', 'Programmed 2026-12-02T10:01:00Z']);
});
