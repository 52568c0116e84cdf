/**
 * The longer, seeded fuzz run of the three readers that parse bytes from the edge — the same
 * properties `npm test` runs a few hundred cases of (test/replica/http/*.fuzz.test.ts), for longer:
 *
 * - client requests: the same bytes to real nginx and to a replica process, each in front of a
 *   recording upstream; whatever the replica forwards, nginx forwards the same way
 *   (test/fuzz/proxy-differential.ts). Several slots (port pairs) run cases side by side;
 * - upstream responses: the response head and chunked body reader (test/fuzz/response-reader.ts);
 * - ClientHellos: the SNI reader (test/fuzz/client-hello.ts).
 *
 * Prints per target the cases run, cases per second, the seed and, for client requests, what came of
 * the cases (agreements, and each kind of disagreement with one example); ends with `failures: N`
 * (exit status 1 when N > 0). A failure prints fast-check's report: the shrunk case, seed and path.
 *
 * Run: npm run fuzz
 * Knobs: FUZZ_SEED (default: random), FUZZ_SECONDS (per target, default 60), FUZZ_RUNS (cases per
 * property, and per slot, instead of a time), FUZZ_TARGETS (any of requests,responses,hellos; default
 * all), FUZZ_SLOTS (client request slots, default 4), FUZZ_EXAMPLES=1 (print one case of each kind of
 * disagreement, with what each side forwarded).
 */
import fc from 'fast-check';
import { captureHellos, clientHelloProperties } from '../test/fuzz/client-hello.ts';
import { differentialProperty, FOUND, ProxyDifferential, Tally } from '../test/fuzz/proxy-differential.ts';
import { type NamedProperty, responseReaderProperties } from '../test/fuzz/response-reader.ts';
import { stopAll } from '../test/helpers/limitswitch-process.ts';

const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 60);
const RUNS = process.env.FUZZ_RUNS === undefined ? null : Number(process.env.FUZZ_RUNS);
const TARGETS = (process.env.FUZZ_TARGETS ?? 'requests,responses,hellos').split(',');
const SLOTS = Number(process.env.FUZZ_SLOTS ?? 4);

/** fast-check's options for one property given `ms` of the target's time. */
function budget(seed: number, ms: number): fc.Parameters<unknown> {
  return RUNS === null
    ? { seed, numRuns: Number.MAX_SAFE_INTEGER, interruptAfterTimeLimit: ms, markInterruptAsFailure: false }
    : { seed, numRuns: RUNS };
}

let failures = 0;

function report(details: fc.RunDetails<unknown>): void {
  if (!details.failed) return;
  failures++;
  console.log(fc.defaultReportMessage(details));
}

const rate = (cases: number, ms: number) => (cases / (ms / 1000)).toFixed(cases / (ms / 1000) < 100 ? 1 : 0);

/** Runs each property for its share of the target's time; prints a line each. */
function runSync(target: string, properties: readonly NamedProperty[]): void {
  console.log(`\n${target} (seed ${SEED})`);
  let total = 0;
  let totalMs = 0;
  for (const { name, property } of properties) {
    const startedMs = performance.now();
    const details = fc.check(property, budget(SEED, (SECONDS * 1000) / properties.length));
    const ms = performance.now() - startedMs;
    total += details.numRuns;
    totalMs += ms;
    console.log(
      `  ${name.padEnd(64)} ${String(details.numRuns).padStart(9)} cases ${rate(details.numRuns, ms).padStart(8)}/s`,
    );
    report(details);
  }
  console.log(
    `  ${'all'.padEnd(64)} ${String(total).padStart(9)} cases ${rate(total, totalMs).padStart(8)}/s`,
  );
}

async function runRequests(): Promise<void> {
  const differential = await ProxyDifferential.start(SLOTS);
  const tally = new Tally();
  const startedMs = performance.now();
  try {
    // one fast-check run per slot, side by side, seeds SEED, SEED + 1, …
    const runs = await Promise.all(
      differential.slots.map((slot, i) =>
        fc.check(differentialProperty(slot, tally), {
          ...budget(SEED + i, SECONDS * 1000),
          ...(i === 0 ? { examples: FOUND.map((c) => [c] as [typeof c]) } : {}),
        }),
      ),
    );
    const ms = performance.now() - startedMs;
    const cases = runs.reduce((n, d) => n + d.numRuns, 0);
    console.log(
      `\nclient requests, nginx and the replica (seeds ${SEED}…${SEED + SLOTS - 1}, ${SLOTS} slots): ${cases} cases, ${rate(cases, ms)}/s`,
    );
    console.log('  what came of them:');
    for (const line of tally.lines()) console.log(`  ${line}`);
    for (const details of runs) report(details);
    if (process.env.FUZZ_EXAMPLES !== undefined) {
      for (const [kind, example] of tally.examples)
        console.log(`\n  ${kind}\n  ${example.replaceAll('\n', '\n  ')}`);
    }
  } finally {
    await differential.stop();
    await stopAll();
  }
}

console.log(
  `fuzz: seed ${SEED}, ${RUNS === null ? `${SECONDS} s a target` : `${RUNS} cases a property`}, targets ${TARGETS.join(', ')}`,
);
if (TARGETS.includes('requests')) await runRequests();
if (TARGETS.includes('responses')) runSync('upstream responses (http1-response)', responseReaderProperties);
if (TARGETS.includes('hellos'))
  runSync('ClientHellos (client-hello)', clientHelloProperties(await captureHellos()));
console.log(`\nfailures: ${failures}`);
process.exitCode = failures === 0 ? 0 : 1;
