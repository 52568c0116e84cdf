/**
 * The client request path, fuzzed against real nginx: request heads and bodies in the shapes that
 * matter for smuggling and desync (test/fuzz/request-shapes.ts) go as the same bytes to nginx and to a
 * replica process on the same configuration, each in front of an upstream that records what it gets.
 * Whatever the replica forwards, nginx must forward too, the same way (test/fuzz/proxy-differential.ts);
 * where the replica refuses what nginx forwards, the kind is tallied and printed.
 */
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { differentialProperty, FOUND, ProxyDifferential, Tally } from '../../fuzz/proxy-differential.ts';
import { stopAll } from '../../helpers/limitswitch-process.ts';

describe('client requests, fuzzed: what the replica forwards, nginx forwards the same way', () => {
  let differential: ProxyDifferential;

  before(async () => {
    differential = await ProxyDifferential.start(1);
  });

  after(async () => {
    await differential?.stop();
    await stopAll();
  });

  it('holds for generated heads, bodies and pipelines, and for what it found before', async (t) => {
    const tally = new Tally();
    await fc.assert(differentialProperty(differential.slots[0]!, tally), {
      numRuns: 40,
      examples: FOUND.map((c) => [c]),
    });
    t.diagnostic('cases by what came of them:');
    for (const line of tally.lines()) t.diagnostic(line);
  });
});
