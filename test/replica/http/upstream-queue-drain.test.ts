/**
 * The upstream queue's drain, alone: a drain runs for whichever request freed a server (or for a free
 * another worker announced), so a queued request whose dequeue throws must end its own client
 * connection, not the one that freed the server, and the requests behind it must still be served.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { test } from 'node:test';
import {
  type DataPathFault,
  reportDataPathFaults,
} from '../../../src/replica/http/contract/fault-boundary.ts';
import { type QueuedRequest, UpstreamQueue } from '../../../src/replica/http/upstream/upstream-queue.ts';
import { systemClock } from '../../../src/shared/clock.ts';

function queued(dequeue: () => boolean): QueuedRequest & { destroyed: boolean } {
  const request = {
    destroyed: false,
    clientSocket: {
      destroy: () => {
        request.destroyed = true;
      },
    } as unknown as Socket,
    dequeued: dequeue,
    queueTimedOut: () => assert.fail('no wait runs out here'),
  };
  return request;
}

test('a dequeue that throws ends its own client; the requests behind it are served', () => {
  const faults: DataPathFault[] = [];
  const stop = reportDataPathFaults((fault) => faults.push(fault));
  const queue = new UpstreamQueue({ size: 3, timeoutMs: 60_000 }, systemClock);
  try {
    const broken = queued(() => {
      throw new Error('a bug met while handing over a server');
    });
    const next = queued(() => true);
    assert.ok(queue.enqueue(broken));
    assert.ok(queue.enqueue(next));
    queue.drain();
    assert.equal(queue.size, 0);
    assert.equal(broken.destroyed, true);
    assert.equal(next.destroyed, false);
    assert.deepEqual(
      faults.map((f) => [f.kind, (f.error as Error).message]),
      [['timer', 'a bug met while handing over a server']],
    );
    assert.equal(queue.counters.served, 1);
    assert.equal(queue.counters.left, 1);
  } finally {
    stop();
    queue.drain();
  }
});
