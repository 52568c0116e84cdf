/**
 * The upstream response reader, fuzzed (test/fuzz/response-reader.ts): only its own errors, no control
 * byte relayed, framing as a reference decides it, chunked bodies decoded however they are cut.
 */
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { responseReaderProperties } from '../../fuzz/response-reader.ts';

describe('upstream responses, fuzzed (http1-response)', () => {
  for (const { name, property } of responseReaderProperties) {
    it(name, () => {
      fc.assert(property, { numRuns: 500 });
    });
  }
});
