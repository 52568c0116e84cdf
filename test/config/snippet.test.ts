import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Directive } from '../../src/config/index.ts';
import { compileDirectives, loadConfigText, parseSnippet, renderDirectives } from '../../src/config/index.ts';
import { renderWord } from '../../src/config/render.ts';

const SOURCE = 'ingress default/cafe nginx.org/location-snippets';

function snippetError(text: string, context: 'http' | 'server' | 'location'): string {
  try {
    parseSnippet(text, context, SOURCE);
  } catch (err) {
    return (err as Error).message;
  }
  return 'parsed';
}

test('a snippet is checked for its context, with the snippet source and line', () => {
  assert.equal(
    snippetError('limit_req zone=a;\nhttp { }\n', 'location'),
    `[emerg] "http" directive is not allowed here in ${SOURCE}:2`,
  );
  assert.equal(
    snippetError('limit_req_zone $uri zone=a:1m rate=1r/s;', 'location'),
    `[emerg] "limit_req_zone" directive is not allowed here in ${SOURCE}:1`,
  );
  assert.equal(
    snippetError('\nlimit_req zone=a burst=0;', 'server'),
    `[emerg] invalid burst value "burst=0" in ${SOURCE}:2`,
  );
  assert.equal(
    snippetError('limit_req zone=a;\nlimit_req zone=a nodelay;', 'location'),
    `[emerg] "limit_req" directive is duplicate in ${SOURCE}:2`,
  );
});

test('a snippet cannot close the block it is placed in', () => {
  assert.equal(
    snippetError('limit_req zone=a;\n}\nserver {', 'location'),
    `[emerg] unexpected "}" in ${SOURCE}:2`,
  );
  assert.equal(
    snippetError('location /x {', 'server'),
    `[emerg] unexpected end of file, expecting "}" in ${SOURCE}:1`,
  );
});

test('zones and variables defined outside the snippet are not required', () => {
  assert.equal(
    parseSnippet('limit_req zone=elsewhere; return 200 $defined_elsewhere;', 'location', SOURCE).length,
    2,
  );
  assert.equal(parseSnippet('location /nested/ { limit_req zone=z; }', 'location', SOURCE).length, 1);
});

test('rendering a tree gives text that parses back to the same tree', () => {
  const text = `map $http_x $y {
    \\default "a b";
    "" empty;
    ~^(?<n>x) 'q"uote';
    default "semi;colon{}#";
}
server { location = /a { return 200 "line\\nnext\\ttab"; } }
`;
  const tree = parseSnippet(text, 'http', 'a.conf');
  const strip = (ds: readonly Directive[]): unknown =>
    ds.map((d) => [d.name, d.args, d.block ? strip(d.block) : null]);
  assert.deepEqual(strip(parseSnippet(renderDirectives(tree), 'http', 'b.conf')), strip(tree));
  assert.deepEqual(
    tree[0]?.block?.map((d) => d.args[0]),
    ['a b', 'empty', 'q"uote', 'semi;colon{}#'],
  );
  assert.equal(renderWord('$binary_remote_addr'), '$binary_remote_addr');
  // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${var} syntax
  assert.equal(renderWord('${uri}x'), '${uri}x');
  assert.equal(renderWord(''), '""');
  assert.equal(renderWord('\\default'), '"\\\\default"');
  assert.equal(renderWord('a{'), '"a{"');
  assert.equal(renderWord('line\nnext'), '"line\\nnext"');
});

test('a directive tree built in code compiles to the model like parsed text', () => {
  const at = (line: number, name: string, args: string[], block: Directive[] | null = null): Directive => ({
    name,
    args,
    file: 'k8s',
    line,
    block,
    endLine: 0,
  });
  const tree = [
    at(
      1,
      'http',
      [],
      [
        at(2, 'limit_req_zone', ['$binary_remote_addr', 'zone=z:1m', 'rate=5r/s']),
        at(
          3,
          'server',
          [],
          [at(4, 'listen', ['8081']), at(5, 'location', ['/'], [at(6, 'limit_req', ['zone=z'])])],
        ),
      ],
    ),
  ];
  const fromTree = compileDirectives(tree, 'k8s');
  const fromText = loadConfigText(renderDirectives(tree), 'k8s');
  assert.equal(fromTree.http.servers[0]?.locations[0]?.limitReq.limits[0]?.zone, 'z');
  assert.deepEqual(fromTree.http.limitReqZones[0]?.rateMilli, fromText.http.limitReqZones[0]?.rateMilli);
  assert.throws(
    () => compileDirectives([at(1, 'http', [], [at(7, 'limit_req', ['zone=nope'])])], 'k8s'),
    /zero size shared memory zone "nope" in k8s:7$/,
  );
});
