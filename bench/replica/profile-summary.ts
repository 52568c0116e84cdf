/**
 * Where a proxy's CPU goes, from a `node --cpu-prof` profile (`BENCH_CPU_PROF=<dir> npm run
 * bench:replica` writes one per proxy process): self time grouped by who spends it, as shares of the
 * samples that were not idle, and the heaviest functions.
 *
 * Run: node --import tsx bench/replica/profile-summary.ts <file.cpuprofile> [functions=15]
 *
 * Native work is counted where V8 saw it: a socket write's system call under the JS function that
 * made it (`writev`, `writeLatin1String`, `writeBuffer`). V8 samples wall time on the main thread, so a
 * process preempted inside a system call (on a box where the load and the upstream share its cores)
 * is counted there too: the kernel's share is an upper bound; perf(1) gives the exact split.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
}

/** Who a frame's self time belongs to. */
const GROUPS: readonly (readonly [string, (url: string, name: string) => boolean])[] = [
  [
    'socket writes and reads (system calls)',
    (url, name) =>
      url === '' && /^(writev|write\w*String|writeBuffer|readStart|readStop|onStreamRead)$/.test(name),
  ],
  ['garbage collection', (_url, name) => name === '(garbage collector)'],
  ['limitswitch data path (src/replica/http)', (url) => url.includes('/src/replica/')],
  ['limitswitch engine and config', (url) => url.includes('/src/')],
  [
    'undici: HTTP/1.1 client (client-h1, llhttp)',
    (url) => /undici\/lib\/(dispatcher\/client-h1|llhttp)|^wasm:/.test(url),
  ],
  ['undici: request, queue, dispatch', (url) => url.includes('undici/')],
  ['node:http server (request, response, parser glue)', (url) => /node:_http_/.test(url)],
  ['node streams', (url) => url.includes('node:internal/streams')],
  ['node net and stream_base', (url) => /node:net|stream_base_commons/.test(url)],
  ['event loop: ticks, immediates, timers', (url) => /task_queues|node:internal\/timers/.test(url)],
  ['node events', (url) => url.includes('node:events')],
  ['other JavaScript', (url) => url !== ''],
  ['other native (V8, libuv)', () => true],
];

function summarize(profile: Profile, functions: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfSamples = new Map<number, number>();
  for (const id of profile.samples) selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
  const groups = new Map<string, number>();
  const perFunction = new Map<string, number>();
  let busy = 0;
  for (const [id, count] of selfSamples) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(root)') continue;
    busy += count;
    const group = GROUPS.find(([, matches]) => matches(url, functionName))![0];
    groups.set(group, (groups.get(group) ?? 0) + count);
    const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/src\//, 'src/');
    const key = `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`;
    perFunction.set(key, (perFunction.get(key) ?? 0) + count);
  }
  const share = (count: number) => `${((100 * count) / busy).toFixed(1).padStart(5)} %`;
  const lines = [`${busy} busy samples of ${profile.samples.length}`, '', 'by owner:'];
  for (const [group, count] of [...groups].sort((a, b) => b[1] - a[1]))
    lines.push(`${share(count)}  ${group}`);
  lines.push('', 'heaviest functions (self):');
  for (const [key, count] of [...perFunction].sort((a, b) => b[1] - a[1]).slice(0, functions)) {
    lines.push(`${share(count)}  ${key}`);
  }
  return lines.join('\n');
}

const [file, functions = '15'] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: profile-summary.ts <file.cpuprofile> [functions]');
  process.exit(2);
}
console.log(summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(functions)));
