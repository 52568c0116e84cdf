/**
 * The dependency rule of docs/architecture.md, checked on every import in `src/` (static and dynamic):
 * layers import only the layers below them, no module cycle, and each vendor library stays in the
 * layer that owns it. A new arrow is a change to this table and to the docs, on purpose.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

/** layer → the layers it may import (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  cli: ['control-plane', 'replica', 'automation', 'k8s', 'metrics', 'config', 'store', 'engine', 'shared'],
  'control-plane': ['automation', 'metrics', 'config', 'store', 'engine', 'shared'],
  replica: ['config', 'store', 'engine', 'shared'],
  automation: ['store', 'engine', 'shared'],
  k8s: ['config', 'engine', 'shared'],
  metrics: ['engine', 'shared'],
  store: ['engine', 'shared'],
  config: ['engine', 'shared'],
  engine: ['shared'],
  shared: [],
};

/**
 * Inside a layer, its folders are layers too: folder (relative to src/; `` for the files at the top of
 * the layer) → the folders of the same layer it may import besides itself. A folder not listed may
 * import none. The most specific folder that holds a file is its sub-layer.
 */
const SUB_LAYERS: Record<string, Record<string, readonly string[]>> = {
  replica: {
    // replica.ts composes the replica: start, reload, stop; it serves through listening/ or workers/
    replica: [
      'replica/workers',
      'replica/listening',
      'replica/policy',
      'replica/cluster',
      'replica/logs',
      'replica/http',
      'replica/http/contract',
      'replica/http/edge',
      'replica/http/upstream',
    ],
    // worker threads: each serves through listening/; the pool forwards their logs and counts, and
    // keeps their TLS sessions (edge/)
    'replica/workers': [
      'replica/listening',
      'replica/policy',
      'replica/logs',
      'replica/http/contract',
      'replica/http/edge',
      'replica/http/upstream',
    ],
    // a listener per port, wired to the engine, the upstreams and the logs
    'replica/listening': [
      'replica/policy',
      'replica/logs',
      'replica/http',
      'replica/http/contract',
      'replica/http/edge',
      'replica/http/upstream',
    ],
    'replica/policy': [
      'replica/logs',
      'replica/http/contract',
      'replica/http/edge',
      'replica/http/upstream',
      'replica/http/static',
    ],
    'replica/cluster': ['replica/logs'],
    'replica/logs': ['replica/http/contract'],
    // the listener composes the data path's layers for an address
    'replica/http': [
      'replica/http/edge',
      'replica/http/inbound',
      'replica/http/exchange',
      'replica/http/upstream',
      'replica/http/wire',
      'replica/http/contract',
    ],
    'replica/http/edge': ['replica/http/contract'],
    'replica/http/inbound': [
      'replica/http/exchange',
      'replica/http/upstream',
      'replica/http/wire',
      'replica/http/contract',
    ],
    'replica/http/exchange': [
      'replica/http/upstream',
      'replica/http/wire',
      'replica/http/contract',
      'replica/http/static',
    ],
    // answers from disk: the static, index, not_modified and range modules
    'replica/http/static': ['replica/http/contract'],
    'replica/http/upstream': ['replica/http/wire', 'replica/http/contract'],
    'replica/http/wire': ['replica/http/contract'],
    'replica/http/contract': [],
  },
  engine: {
    'engine/http': [
      'engine',
      'engine/variables',
      'engine/limit-req',
      'engine/limit-conn',
      'engine/priority',
      'engine/api-limiter',
      'engine/keyval',
      'engine/upstream',
      'engine/net',
    ],
    'engine/variables': ['engine', 'engine/limit-req', 'engine/limit-conn', 'engine/net'],
    'engine/limit-req': ['engine', 'engine/net'],
    'engine/limit-conn': ['engine', 'engine/net'],
    'engine/priority': ['engine', 'engine/net'],
    'engine/api-limiter': ['engine', 'engine/net'],
    'engine/keyval': ['engine', 'engine/net'],
    'engine/upstream': ['engine', 'engine/net'],
    'engine/net': ['engine'],
    engine: [],
  },
};

/** The sub-layer of `file` (relative to src/), or null when its layer has none. */
function subLayerOf(file: string): string | null {
  const table = SUB_LAYERS[file.split('/')[0]!];
  if (table === undefined) return null;
  let folder = dirname(file);
  while (!(folder in table)) {
    if (!folder.includes('/')) return null;
    folder = dirname(folder);
  }
  return folder;
}

/** vendor package → the source folders or files (relative to src/) that may import it. */
const VENDORS: Record<string, readonly string[]> = {
  fastify: ['control-plane'],
  ioredis: ['store/redis'],
  'prom-client': ['metrics'],
  '@kubernetes/client-node': ['k8s/watch', 'cli'],
  // test and benchmark clients only: the replica speaks HTTP/1.1 to its upstreams itself
  undici: [],
  pino: ['cli'],
  commander: ['cli'],
  // every regex of the configuration is compiled in one file; the engine sees only its NginxRegex
  re2: ['config/regex.ts'],
};

interface Module {
  readonly file: string;
  readonly layer: string;
  readonly imports: { readonly target: string; readonly text: string }[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function modules(): Module[] {
  return sourceFiles(SRC).map((path) => {
    const file = relative(SRC, path);
    const text = readFileSync(path, 'utf8');
    const imports: Module['imports'] = [];
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2]!;
      const target = spec.startsWith('.') ? normalize(join(dirname(file), spec)) : spec;
      imports.push({ target, text: spec });
    }
    return { file, layer: file.split('/')[0]!, imports };
  });
}

const all = modules();

describe('dependency rule', () => {
  it('reads the whole source tree', () => {
    assert.ok(all.length > 100, `${all.length} modules`);
    assert.deepEqual(
      [...new Set(all.map((m) => m.layer))].sort(),
      Object.keys(ALLOWED).sort(),
      'every folder of src/ has a row in ALLOWED',
    );
  });

  it('every import runs down the layers, never up, and never out of src/', () => {
    const wrong: string[] = [];
    for (const m of all) {
      for (const { target, text } of m.imports) {
        if (!text.startsWith('.')) continue;
        if (target.startsWith('..')) {
          wrong.push(`${m.file} imports ${text} (outside src/)`);
          continue;
        }
        const layer = target.split('/')[0]!;
        if (layer !== m.layer && !ALLOWED[m.layer]!.includes(layer)) {
          wrong.push(`${m.file} (${m.layer}) imports ${target} (${layer})`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('inside the replica and the engine, every import runs down their folders, never up', () => {
    const wrong: string[] = [];
    for (const m of all) {
      const from = subLayerOf(m.file);
      if (from === null) continue;
      const table = SUB_LAYERS[m.layer]!;
      for (const { target, text } of m.imports) {
        if (!text.startsWith('.') || target.split('/')[0] !== m.layer) continue;
        const to = subLayerOf(target);
        if (to === null || to === from) continue;
        if (!table[from]!.includes(to)) wrong.push(`${m.file} (${from}) imports ${target} (${to})`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('every folder of the replica and the engine has a row in their tables', () => {
    const unlisted = new Set<string>();
    for (const m of all) {
      const table = SUB_LAYERS[m.layer];
      if (table !== undefined && !(dirname(m.file) in table)) unlisted.add(dirname(m.file));
    }
    assert.deepEqual([...unlisted], []);
  });

  it('no import cycle between modules', () => {
    const graph = new Map(
      all.map((m) => [m.file, m.imports.filter((i) => i.text.startsWith('.')).map((i) => i.target)]),
    );
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(cycles, []);
  });

  it('each vendor library is imported only where it belongs', () => {
    const wrong: string[] = [];
    for (const m of all) {
      for (const { text } of m.imports) {
        const vendor = Object.keys(VENDORS).find((v) => text === v || text.startsWith(`${v}/`));
        const allowed = (place: string) => m.file === place || m.file.startsWith(`${place}/`);
        if (vendor && !VENDORS[vendor]!.some(allowed)) {
          wrong.push(`${m.file} imports ${vendor}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
  });
});
