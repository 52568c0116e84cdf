import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, loadConfigFile } from '../../src/config/index.ts';
import { parseConfigText } from '../../src/config/parser.ts';

const root = mkdtempSync(join(tmpdir(), 'limitswitch-parser-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Writes files under a fresh folder; returns the folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, 'case-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function loadError(path: string): ConfigError {
  try {
    loadConfigFile(path);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  assert.fail(`${path} loaded`);
}

test('the tree keeps names, arguments, blocks and the lines nginx reports', () => {
  const { directives, error } = parseConfigText(
    'http {\n  map $uri $x {\n    default 1;\n  }\n}\n',
    'a.conf',
    {
      prefix: root,
    },
  );
  assert.equal(error, null);
  assert.deepEqual(directives, [
    {
      name: 'http',
      args: [],
      file: 'a.conf',
      line: 1,
      endLine: 5,
      block: [
        {
          name: 'map',
          args: ['$uri', '$x'],
          file: 'a.conf',
          line: 2,
          endLine: 4,
          block: [{ name: 'default', args: ['1'], file: 'a.conf', line: 3, endLine: 0, block: null }],
        },
      ],
    },
  ]);
});

test('a syntax error is returned with everything parsed before it', () => {
  const { directives, error } = parseConfigText('a;\nb {\n  c;\n  d e\n', 'a.conf', { prefix: root });
  assert.equal(error?.text, 'unexpected end of file, expecting ";" or "}"');
  assert.equal(error?.line, 5);
  assert.deepEqual(
    directives.map((d) => [d.name, d.endLine, d.block?.map((c) => c.name)]),
    [
      ['a', 0, undefined],
      ['b', 0, ['c']],
    ],
  );
});

test('include is expanded in place; relative paths are resolved against the main file folder', () => {
  const dir = tree({
    'nginx.conf': 'http {\n    include sites/cafe.conf;\n    limit_req_status 429;\n}\n',
    // nested: this path is relative to the folder of nginx.conf, not of sites/cafe.conf
    'sites/cafe.conf': 'include sites/zones/tea.conf;\nserver { listen 8081; }\n',
    'sites/zones/tea.conf': 'limit_req_zone $binary_remote_addr zone=tea:1m rate=1r/s;\n',
  });
  const config = loadConfigFile(join(dir, 'nginx.conf'));
  assert.deepEqual(
    config.http.limitReqZones.map((z) => [z.name, z.source]),
    [['tea', { file: join(dir, 'sites/zones/tea.conf'), line: 1 }]],
  );
  assert.deepEqual(config.http.servers[0]?.source, { file: join(dir, 'sites/cafe.conf'), line: 2 });
  assert.equal(config.http.servers[0]?.limitReq.status, 429);
});

test('glob includes expand in sorted order; no match is no error; dot files are skipped', () => {
  const dir = tree({
    'nginx.conf': 'http {\n    include conf.d/*.conf;\n    include none.d/*.conf;\n}\n',
    'conf.d/b.conf': 'limit_req_zone $uri zone=b:1m rate=1r/s;\n',
    'conf.d/a.conf': 'limit_req_zone $uri zone=a:1m rate=1r/s;\n',
    'conf.d/.hidden.conf': 'broken {\n',
    'conf.d/c.txt': 'broken {\n',
  });
  const config = loadConfigFile(join(dir, 'nginx.conf'));
  assert.deepEqual(
    config.http.limitReqZones.map((z) => z.name),
    ['a', 'b'],
  );
});

test('glob character classes and ? work as in glob(3)', () => {
  const dir = tree({
    'nginx.conf': 'http {\n    include z[0-1]?.conf;\n}\n',
    'z0a.conf': 'limit_req_zone $uri zone=z0a:1m rate=1r/s;\n',
    'z1b.conf': 'limit_req_zone $uri zone=z1b:1m rate=1r/s;\n',
    'z2c.conf': 'limit_req_zone $uri zone=z2c:1m rate=1r/s;\n',
    'z0.conf': 'limit_req_zone $uri zone=z0:1m rate=1r/s;\n',
  });
  assert.deepEqual(
    loadConfigFile(join(dir, 'nginx.conf')).http.limitReqZones.map((z) => z.name),
    ['z0a', 'z1b'],
  );
});

test('include inside a map block adds map lines', () => {
  const dir = tree({
    'nginx.conf':
      'http {\n    map $uri $limited {\n        default 0;\n        include limited-uris.map;\n    }\n}\n',
    'limited-uris.map': '/coffee 1;\n~^/tea/ 1;\n',
  });
  const map = loadConfigFile(join(dir, 'nginx.conf')).http.maps[0];
  assert.deepEqual(
    map?.entries.map((e) => (e.kind === 'exact' ? e.match : e.pattern)),
    ['/coffee', '^/tea/'],
  );
});

test('an error in an included file is reported with that file and line', () => {
  const dir = tree({
    'nginx.conf': 'events {}\nhttp {\n    include conf.d/*.conf;\n}\n',
    'conf.d/tea.conf': '# tea\n\nlimit_req_zone $uri zone=tea:1m rate=0r/s;\n',
  });
  const err = loadError(join(dir, 'nginx.conf'));
  assert.equal(err.message, `[emerg] invalid rate "rate=0r/s" in ${join(dir, 'conf.d/tea.conf')}:3`);
});

test('an included file cannot close the block that includes it', () => {
  const dir = tree({ 'nginx.conf': 'http {\n    include close.conf;\n}\n', 'close.conf': '\n}\n' });
  const err = loadError(join(dir, 'nginx.conf'));
  assert.equal(err.message, `[emerg] unexpected "}" in ${join(dir, 'close.conf')}:2`);
});

test('including a folder or a missing file fails like nginx', () => {
  const dir = tree({ 'nginx.conf': 'http {\n    include conf.d;\n}\n', 'conf.d/a.conf': '' });
  assert.equal(
    loadError(join(dir, 'nginx.conf')).message,
    `[emerg] pread() "${join(dir, 'conf.d')}" failed (21: Is a directory) in ${join(dir, 'nginx.conf')}:2`,
  );
  const missing = tree({ 'nginx.conf': '\n\ninclude /nonexistent/limitswitch.conf;\n' });
  assert.equal(
    loadError(join(missing, 'nginx.conf')).message,
    `[emerg] open() "/nonexistent/limitswitch.conf" failed (2: No such file or directory) in ${join(missing, 'nginx.conf')}:3`,
  );
});

test('an include loop stops at a fixed depth', () => {
  const dir = tree({ 'nginx.conf': 'include loop.conf;\n', 'loop.conf': 'include loop.conf;\n' });
  const err = loadError(join(dir, 'nginx.conf'));
  assert.equal(err.text, 'include nesting is deeper than 32 levels');
  assert.equal(err.file, join(dir, 'loop.conf'));
});

test('a malformed include is rejected by the directive checks', () => {
  const dir = tree({ 'nginx.conf': 'http {\n    include a.conf b.conf;\n}\n' });
  assert.equal(loadError(join(dir, 'nginx.conf')).text, 'invalid number of arguments in "include" directive');
});

test('a missing main file is reported without a position', () => {
  const err = loadError(join(root, 'missing.conf'));
  assert.equal(
    err.message,
    `[emerg] open() "${join(root, 'missing.conf')}" failed (2: No such file or directory)`,
  );
  assert.equal(err.line, 0);
});
