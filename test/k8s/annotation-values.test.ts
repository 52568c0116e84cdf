import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseBool,
  parseCidrList,
  parseKey,
  parseRate,
  parseSnippet,
  parseStatusCode,
  parseZoneSize,
} from '../../src/k8s/translate/annotation-values.ts';
import { scaleRate } from '../../src/k8s/translate/scale-rate.ts';
import { checkSnippet } from '../../src/k8s/translate/snippet-check.ts';

describe('annotation values', () => {
  it('parses rates like NIC and refuses others with the value named', () => {
    assert.deepEqual(parseRate('10r/s'), { count: 10, unit: 'r/s' });
    assert.deepEqual(parseRate('600r/m'), { count: 600, unit: 'r/m' });
    assert.throws(() => parseRate('10r/h'), {
      message: 'invalid value "10r/h": must be a rate like 10r/s or 600r/m',
    });
    assert.throws(() => parseRate('0r/s'), {
      message: 'invalid value "0r/s": must be a rate like 10r/s or 600r/m',
    });
  });

  it('parses zone sizes as nginx does, with its 32k minimum', () => {
    assert.equal(parseZoneSize('10m'), '10m');
    assert.equal(parseZoneSize('32k'), '32k');
    assert.throws(() => parseZoneSize('16k'), {
      message: 'invalid value "16k": a zone must be at least 32k',
    });
    assert.throws(() => parseZoneSize('1g'), {
      message: 'invalid value "1g": must be a size like 10m or 512k',
    });
  });

  it("reads booleans like Go's strconv.ParseBool", () => {
    assert.equal(parseBool('True'), true);
    assert.equal(parseBool('0'), false);
    assert.throws(() => parseBool('yes'), { message: 'invalid value "yes": must be true or false' });
  });

  it('bounds reject codes to what limit_req_status accepts', () => {
    assert.equal(parseStatusCode('429'), 429);
    assert.throws(() => parseStatusCode('302'), {
      message: 'invalid value "302": must be an HTTP status code between 400 and 599',
    });
  });

  it('checks keys as nginx complex values', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not templates
    assert.equal(parseKey('${binary_remote_addr}:$uri'), '${binary_remote_addr}:$uri');
    assert.throws(() => parseKey('${oops'), {
      message: 'invalid value "${oops": the closing bracket in "oops" variable is missing',
    });
  });

  it('sorts and deduplicates allowlists and names a bad entry', () => {
    assert.deepEqual(parseCidrList('10.0.0.0/8, 192.168.1.1,10.0.0.0/8'), ['10.0.0.0/8', '192.168.1.1']);
    assert.throws(() => parseCidrList('10.0.0.0/8,nope'), {
      message: 'invalid value "10.0.0.0/8,nope": "nope" is not an IP address or CIDR',
    });
  });
});

describe('snippet check', () => {
  it('accepts the seed snippets', () => {
    assert.equal(
      checkSnippet('limit_req zone=req_zone_10 burst=1 nodelay;\nlimit_req zone=perserver nodelay;\n'),
      null,
    );
    assert.equal(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx variables, not templates
      checkSnippet('map $a $b {\n  default "";\n  1 "${binary_remote_addr}}";\n}\n# done {\n'),
      null,
    );
  });

  it('refuses a snippet that would close its block and inject another', () => {
    assert.equal(
      checkSnippet('limit_req zone=a;\n}\nserver { listen 81; }\nlocation /x {\n'),
      'unexpected "}" on line 2: a snippet cannot close the block it is placed in',
    );
    assert.throws(() => parseSnippet('return 200;\n}'), {
      message: 'invalid snippet: unexpected "}" on line 2: a snippet cannot close the block it is placed in',
    });
  });

  it('refuses include, which would read the replica’s files into the config', () => {
    assert.equal(
      checkSnippet('limit_req zone=a;\n  include /etc/passwd;'),
      '"include" is not allowed in a snippet (line 2)',
    );
    assert.equal(checkSnippet('set $x include;'), null);
  });

  it('refuses unterminated statements, blocks and strings', () => {
    assert.equal(
      checkSnippet('limit_req zone=a'),
      'unexpected end of snippet, expecting ";" after the statement on line 1',
    );
    assert.equal(checkSnippet('map $a $b {\n default 1;\n'), 'unexpected end of snippet, expecting "}"');
    assert.equal(checkSnippet('return 200 "abc;\n'), 'unterminated quoted string starting on line 1');
    assert.equal(checkSnippet(';'), 'unexpected ";" on line 1');
  });
});

describe('limit-req-scale arithmetic (NIC scaleRatelimit)', () => {
  it('divides and rounds down', () => {
    assert.deepEqual(scaleRate({ count: 10, unit: 'r/s' }, 3), { count: 3, unit: 'r/s' });
    assert.deepEqual(scaleRate({ count: 100, unit: 'r/m' }, 3), { count: 33, unit: 'r/m' });
  });

  it('switches to r/m below 1r/s, then rounds down', () => {
    assert.deepEqual(scaleRate({ count: 1, unit: 'r/s' }, 4), { count: 15, unit: 'r/m' });
    assert.deepEqual(scaleRate({ count: 1, unit: 'r/s' }, 3), { count: 20, unit: 'r/m' });
    assert.deepEqual(scaleRate({ count: 1, unit: 'r/s' }, 7), { count: 8, unit: 'r/m' });
  });

  it('never writes 0r/m (nginx refuses it) and ignores a missing count', () => {
    assert.deepEqual(scaleRate({ count: 1, unit: 'r/m' }, 5), { count: 1, unit: 'r/m' });
    assert.deepEqual(scaleRate({ count: 10, unit: 'r/s' }, 0), { count: 10, unit: 'r/s' });
  });
});
