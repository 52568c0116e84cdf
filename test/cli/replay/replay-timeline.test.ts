import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoggedRequest } from '../../../src/cli/replay/log-record.ts';
import {
  REORDER_WINDOW_MS,
  ReplayTimeline,
  type SameSecond,
} from '../../../src/cli/replay/replay-timeline.ts';

const logged = (loggedMs: number, requestTimeMs: number, uri: string): LoggedRequest => ({
  loggedMs,
  requestTimeMs,
  request: { t: loggedMs, addr: '10.0.0.1', uri },
});

function play(lines: readonly LoggedRequest[], secondResolution = false, sameSecond: SameSecond = 'spread') {
  const out: { t: number; uri: string }[] = [];
  const timeline = new ReplayTimeline(secondResolution, sameSecond, (p) =>
    out.push({ t: p.t, uri: p.logged.request.uri }),
  );
  for (const line of lines) timeline.push(line);
  timeline.finish();
  return { out, late: timeline.late };
}

describe('replay timeline', () => {
  it('replays requests when they came in ($msec − $request_time), ties in log order', () => {
    const { out, late } = play([
      logged(1000, 0, '/a'), // came in at 1000
      logged(1010, 500, '/b'), // came in at 510: logged after /a, came in before it
      logged(1020, 10, '/c'), // 1010
      logged(1030, 20, '/d'), // 1010, after /c in the log
    ]);
    assert.deepEqual(out, [
      { t: 510, uri: '/b' },
      { t: 1000, uri: '/a' },
      { t: 1010, uri: '/c' },
      { t: 1010, uri: '/d' },
    ]);
    assert.equal(late, 0);
  });

  it('1 s times: the lines of a second spread over it in log order, or all at its start (burst)', () => {
    const second = [
      logged(5000, 0, '/1'),
      logged(5000, 0, '/2'),
      logged(5000, 0, '/3'),
      logged(5000, 0, '/4'),
      logged(6000, 0, '/5'),
    ];
    assert.deepEqual(
      play(second, true, 'spread').out.map((r) => r.t),
      [5000, 5250, 5500, 5750, 6000],
    );
    assert.deepEqual(
      play(second, true, 'burst').out.map((r) => r.t),
      [5000, 5000, 5000, 5000, 6000],
    );
  });

  it('a request logged more than the window after others that came in later is replayed late, at the current time', () => {
    const { out, late } = play([
      logged(1000, 0, '/a'),
      logged(1000 + REORDER_WINDOW_MS + 1, 0, '/b'), // its arrival releases /a
      logged(1000 + REORDER_WINDOW_MS + 2, REORDER_WINDOW_MS + 100, '/long'), // came in at 902, before /a
    ]);
    assert.deepEqual(out, [
      { t: 1000, uri: '/a' },
      { t: 1000, uri: '/long' },
      { t: 1000 + REORDER_WINDOW_MS + 1, uri: '/b' },
    ]);
    assert.equal(late, 1);
  });
});
