/**
 * The ClientHello reader, fuzzed (test/fuzz/client-hello.ts): arbitrary bytes, and real hellos from
 * node:tls clients cut into records of any size and cut off anywhere.
 */
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { captureHellos, clientHelloProperties } from '../../fuzz/client-hello.ts';

const hellos = await captureHellos();

describe('ClientHellos, fuzzed (client-hello)', () => {
  for (const { name, property } of clientHelloProperties(hellos)) {
    it(name, () => {
      fc.assert(property, { numRuns: 500 });
    });
  }
});
