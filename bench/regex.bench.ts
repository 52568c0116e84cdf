/**
 * What running the configuration's regexes on RE2 costs, side by side in one process with what
 * limitswitch ran before (a JavaScript RegExp, V8's backtracking irregexp, with `(?P<` and a leading
 * `(?i)` translated): ordinary patterns one call at a time, a whole engine request (route + rewrite +
 * maps) on a site whose server name, locations, `if` and maps are regexes, and the worst cases.
 *
 * Ordinary cases: each engine's loop runs until 20 ms have passed, rounds interleaved (RE2, RegExp,
 * RE2, …), the median of ROUNDS reported. Worst cases: one call each, timed; RegExp only on inputs
 * short enough to end (its time grows exponentially or polynomially with the input).
 *
 * Run: npm run bench:regex   (last line: JSON)
 * Knobs: BENCH_ROUNDS (default 7).
 */
import { buildSite } from '../src/config/build-site.ts';
import { loadConfigText } from '../src/config/index.ts';
import type { HttpConf, LocationConf, ServerConf } from '../src/config/model.ts';
import { compileRegex } from '../src/config/regex.ts';
import type { Site } from '../src/engine/http/site.ts';
import type { NginxRegex } from '../src/engine/nginx-regex.ts';
import type { RequestFacts } from '../src/engine/variables/request-context.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const AT = { file: 'bench', line: 1 };

/** What limitswitch compiled every pattern into before: a RegExp, PCRE's spellings translated. */
function before(pattern: string, caseless: boolean): NginxRegex {
  let source = pattern.replaceAll('(?P<', '(?<');
  let flags = caseless ? 'i' : '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  return new RegExp(source, flags);
}

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

const EXT = '\\.(gif|jpg|jpeg|png)$';
const API = '^/api/(?<ver>v[0-9]+)/';
const SUB = '^(?<sub>[a-z0-9-]+)\\.example\\.com$';
const PLATFORM = '^Mozilla/5\\.0 \\(([^;)]+)';
const BOT = '(bot|crawler|spider)';
const LATIN1 = `${CHROME} caf\u00e9 \u00ff\u00e0`;

interface OrdinaryCase {
  readonly name: string;
  readonly pattern: string;
  readonly caseless: boolean;
  readonly op: 'test' | 'exec';
  readonly subject: string;
}

/** As the engine calls them: test(), and exec() when a map's `$1`… is read after it matched. */
const ORDINARY: readonly OrdinaryCase[] = [
  { name: 'location ~* ext, hit', pattern: EXT, caseless: true, op: 'test', subject: '/images/photo.jpg' },
  { name: 'location ~* ext, miss', pattern: EXT, caseless: true, op: 'test', subject: '/api/v1/users/42' },
  {
    name: 'location ~ named capture',
    pattern: API,
    caseless: false,
    op: 'test',
    subject: '/api/v2/orders/17',
  },
  { name: 'the same, exec', pattern: API, caseless: false, op: 'exec', subject: '/api/v2/orders/17' },
  {
    name: 'server_name ~ named capture',
    pattern: SUB,
    caseless: true,
    op: 'test',
    subject: 'api.example.com',
  },
  { name: 'map ~* UA, $1 read (exec)', pattern: PLATFORM, caseless: true, op: 'exec', subject: CHROME },
  { name: 'map ~* bot, miss (whole UA)', pattern: BOT, caseless: true, op: 'test', subject: CHROME },
  { name: 'the same, bytes 0x80-0xFF', pattern: BOT, caseless: true, op: 'test', subject: LATIN1 },
  { name: 'the same, 8 KiB UA', pattern: BOT, caseless: true, op: 'test', subject: 'x'.repeat(8192) },
];

/** ns per call: runs `call` in batches until 20 ms have passed. */
function nsPerCall(call: () => unknown): number {
  let calls = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < 20_000_000n) {
    for (let i = 0; i < 1000; i++) call();
    calls += 1000;
    elapsed = process.hrtime.bigint() - start;
  }
  return Number(elapsed) / calls;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * One call on the next of 64 equal subjects, each its own string: a request's header is a new string,
 * and the binding converts a string to UTF-8 unless it is the one the same regex saw last.
 */
function ordinaryCall(c: OrdinaryCase, re: NginxRegex): () => unknown {
  const subjects = Array.from({ length: 64 }, () => [...c.subject].join(''));
  let i = 0;
  return c.op === 'test' ? () => re.test(subjects[i++ & 63]!) : () => re.exec(subjects[i++ & 63]!);
}

/**
 * A site whose every step of a request meets a regex: server name, two locations, `if`, two maps (five
 * regexes run); `platform` is what the second map's hit yields: `$1` (its captures read) or a constant.
 */
const siteConf = (platform: string): string => `http {
  map $http_user_agent $is_bot { default 0; "~*(bot|crawler|spider)" 1; }
  map $http_user_agent $platform { default other; "~*^Mozilla/5\\.0 \\(([^;)]+)" ${platform}; }
  limit_req_zone $platform$binary_remote_addr zone=z:10m rate=1000000r/s;
  server { listen 8081; server_name "~^(?<sub>[a-z0-9-]+)\\.example\\.com$";
    location ~* \\.(gif|jpg|jpeg|png|css|js)$ { return 200; }
    location ~ ^/api/v[0-9]+/ {
      if ($is_bot) { return 403; }
      limit_req zone=z burst=1000000 nodelay;
      proxy_pass http://127.0.0.1:9;
    }
    location / { return 404; }
  }
}`;

/** The same model with every compiled regex replaced by the RegExp limitswitch used before. */
function withRegExps(http: HttpConf): HttpConf {
  const location = (l: LocationConf): LocationConf => ({
    ...l,
    regex: l.regex === null ? null : before(l.pattern, l.match === '~*'),
    locations: l.locations.map(location),
    script: l.script.map((i) =>
      i.op !== 'if'
        ? i
        : {
            ...i,
            condition: {
              ...i.condition,
              regex:
                i.condition.pattern === null
                  ? null
                  : before(i.condition.pattern, i.condition.op.endsWith('*')),
            },
          },
    ),
  });
  const server = (s: ServerConf): ServerConf => ({
    ...s,
    serverNameRegexes: s.serverNames.filter((n) => n.startsWith('~')).map((n) => before(n.slice(1), true)),
    locations: s.locations.map(location),
  });
  return {
    ...http,
    maps: http.maps.map((m) => ({
      ...m,
      entries: m.entries.map((e) =>
        e.kind === 'regex' ? { ...e, regex: before(e.pattern, e.caseless) } : e,
      ),
    })),
    servers: http.servers.map(server),
  };
}

/** One engine request, on the next of 64 equal requests whose strings are each their own (as above). */
function siteRequest(site: Site): () => unknown {
  const fresh = (text: string): string => [...text].join('');
  const requests: RequestFacts[] = Array.from({ length: 64 }, () => ({
    method: 'GET',
    scheme: 'http',
    target: fresh('/api/v2/orders/17'),
    headers: { host: fresh('shop.example.com'), 'user-agent': fresh(CHROME) },
    remoteAddr: '10.0.0.1',
    remotePort: 40000,
    serverAddr: '127.0.0.1',
    serverPort: 8081,
  }));
  let nowMs = 1_700_000_000_000;
  let i = 0;
  return () => {
    const facts = requests[i++ & 63]!;
    const route = site.route(facts.target, facts.headers.host, facts.serverAddr, facts.serverPort)!;
    return site.decide(route, facts, nowMs++);
  };
}

interface WorstCase {
  readonly name: string;
  readonly pattern: string;
  readonly subject: (n: number) => string;
  /** Input lengths RE2 runs, and the (shorter) ones RegExp is given. */
  readonly re2: readonly number[];
  readonly regexp: readonly number[];
}

const WORST: readonly WorstCase[] = [
  {
    name: '^(\\w+\\s?)+$ on a…a!',
    pattern: '^(\\w+\\s?)+$',
    subject: (n) => `${'a'.repeat(n - 1)}!`,
    re2: [31, 8000],
    regexp: [21, 23, 25, 27],
  },
  {
    name: '\\d+\\d+x on digits',
    pattern: '\\d+\\d+x',
    subject: (n) => '1'.repeat(n),
    re2: [8000],
    regexp: [500, 1000],
  },
  { name: 'a+b on a…a', pattern: 'a+b', subject: (n) => 'a'.repeat(n), re2: [8000], regexp: [8000] },
];

function msOnce(re: NginxRegex, subject: string): number {
  const start = process.hrtime.bigint();
  re.test(subject);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function main(): void {
  const json: Record<string, number> = {};
  const pairs = ORDINARY.map((c) => ({
    name: c.name,
    re2: ordinaryCall(c, compileRegex(c.pattern, c.caseless, AT)),
    regexp: ordinaryCall(c, before(c.pattern, c.caseless)),
  }));
  for (const [name, platform] of [
    ['engine request, 5 regexes', 'mozilla'],
    ['the same, a $1 read', '$1'],
  ]) {
    const http = loadConfigText(siteConf(platform!), 'bench.conf').http;
    pairs.push({
      name: name!,
      re2: siteRequest(buildSite(http)),
      regexp: siteRequest(buildSite(withRegExps(http))),
    });
  }
  const samples = pairs.map(() => ({ re2: [] as number[], regexp: [] as number[] }));
  for (const pair of pairs) {
    pair.re2();
    pair.regexp();
  }
  for (let round = 0; round < ROUNDS; round++) {
    pairs.forEach((pair, i) => {
      samples[i]!.re2.push(nsPerCall(pair.re2));
      samples[i]!.regexp.push(nsPerCall(pair.regexp));
    });
  }
  console.log(`${'ordinary (ns per call)'.padEnd(34)} ${'RE2'.padStart(8)} ${'RegExp'.padStart(8)}  ratio`);
  pairs.forEach((pair, i) => {
    const re2 = median(samples[i]!.re2);
    const regexp = median(samples[i]!.regexp);
    console.log(
      `${pair.name.padEnd(34)} ${re2.toFixed(0).padStart(8)} ${regexp.toFixed(0).padStart(8)}  ${(re2 / regexp).toFixed(1)}×`,
    );
    json[`${pair.name} re2_ns`] = Math.round(re2);
    json[`${pair.name} regexp_ns`] = Math.round(regexp);
  });

  console.log('\nworst cases (ms, one call)');
  for (const w of WORST) {
    const re2 = compileRegex(w.pattern, false, AT);
    const regexp = before(w.pattern, false);
    // first uses: RE2 builds its DFA's states, V8 interprets a RegExp before it compiles it to code
    for (let i = 0; i < 3; i++) {
      re2.test(w.subject(8));
      regexp.test(w.subject(8));
    }
    for (const n of w.re2) {
      const ms = msOnce(re2, w.subject(n));
      console.log(`  RE2     ${w.name.padEnd(24)} n=${String(n).padEnd(5)} ${ms.toFixed(3)}`);
      json[`${w.name} n=${n} re2_ms`] = Math.round(ms * 1000) / 1000;
    }
    for (const n of w.regexp) {
      const ms = msOnce(regexp, w.subject(n));
      console.log(`  RegExp  ${w.name.padEnd(24)} n=${String(n).padEnd(5)} ${ms.toFixed(3)}`);
      json[`${w.name} n=${n} regexp_ms`] = Math.round(ms * 1000) / 1000;
    }
  }
  console.log(JSON.stringify(json));
}

main();
