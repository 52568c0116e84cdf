import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDurationMs, parseDurationMs } from '../../src/automation/duration.ts';
import { matchesAll, parseLabelMatcher } from '../../src/automation/label-matcher.ts';
import { parseLabelTemplate } from '../../src/automation/label-template.ts';

describe('label matchers (Alertmanager syntax)', () => {
  const labels = { alertname: 'CoffeeOverloaded', path: '/coffee', severity: 'page' };

  it('equality and inequality, quoted or bare', () => {
    assert.equal(parseLabelMatcher('alertname="CoffeeOverloaded"').matches(labels), true);
    assert.equal(parseLabelMatcher('alertname=CoffeeOverloaded').matches(labels), true);
    assert.equal(parseLabelMatcher(' alertname = "TeaOverloaded" ').matches(labels), false);
    assert.equal(parseLabelMatcher('severity!="info"').matches(labels), true);
    assert.equal(parseLabelMatcher('severity!=page').matches(labels), false);
  });

  it('regular expressions are anchored at both ends', () => {
    assert.equal(parseLabelMatcher('path=~"/coffee|/tea"').matches(labels), true);
    assert.equal(parseLabelMatcher('path=~"/cof"').matches(labels), false);
    assert.equal(parseLabelMatcher('path=~"/cof.*"').matches(labels), true);
    assert.equal(parseLabelMatcher('path!~"/tea.*"').matches(labels), true);
    assert.equal(parseLabelMatcher('severity!~"page|critical"').matches(labels), false);
  });

  it('a missing label matches as the empty string', () => {
    assert.equal(parseLabelMatcher('team=""').matches(labels), true);
    assert.equal(parseLabelMatcher('team!=""').matches(labels), false);
    assert.equal(parseLabelMatcher('team=~".*"').matches(labels), true);
    assert.equal(parseLabelMatcher('team=~".+"').matches(labels), false);
  });

  it('escapes in quoted values', () => {
    const m = parseLabelMatcher('summary="say \\"hi\\"\\\\n"');
    assert.equal(m.value, 'say "hi"\\n');
    assert.equal(parseLabelMatcher('a="x\\ny"').value, 'x\ny');
  });

  it('all matchers must match; none matches nothing', () => {
    const both = ['alertname="CoffeeOverloaded"', 'path=~"/coffee"'].map(parseLabelMatcher);
    assert.equal(matchesAll(both, labels), true);
    assert.equal(matchesAll(both, { ...labels, path: '/tea' }), false);
    assert.equal(matchesAll([], labels), false);
  });

  it('refuses what it cannot read, saying why', () => {
    assert.throws(() => parseLabelMatcher('alertname'), {
      message: 'invalid matcher "alertname": expected name, one of = != =~ !~, and a value',
    });
    assert.throws(() => parseLabelMatcher('1abc="x"'), {
      message: 'invalid matcher "1abc="x"": expected name, one of = != =~ !~, and a value',
    });
    assert.throws(() => parseLabelMatcher('path=~"(unclosed"'), {
      message: /^invalid matcher "path=~"\(unclosed"": Invalid regular expression/,
    });
    assert.throws(() => parseLabelMatcher('a="x'), { message: 'invalid matcher "a="x": unterminated quote' });
    assert.throws(() => parseLabelMatcher('a="x"y"'), {
      message: 'invalid matcher "a="x"y"": unescaped quote in value',
    });
    assert.throws(() => parseLabelMatcher('a="\\t"'), {
      message: 'invalid matcher "a="\\t"": unknown escape "\\t"',
    });
    assert.throws(() => parseLabelMatcher('a=x y'), {
      message: 'invalid matcher "a=x y": quote values that contain spaces or quotes',
    });
  });
});

describe('label templates', () => {
  it('fills {{ .Labels.name }} pieces, with or without spaces', () => {
    const t = parseLabelTemplate('{{ .Labels.host }}:{{.Labels.path}}');
    assert.deepEqual(t.labels, ['host', 'path']);
    assert.deepEqual(t.render({ host: 'cafe.example.com', path: '/tea' }), {
      value: 'cafe.example.com:/tea',
    });
    assert.deepEqual(parseLabelTemplate('/coffee').render({}), { value: '/coffee' });
  });

  it('names the first missing or empty label', () => {
    const t = parseLabelTemplate('{{ .Labels.host }}{{ .Labels.path }}');
    assert.deepEqual(t.render({ path: '/tea' }), { missing: 'host' });
    assert.deepEqual(t.render({ host: 'a', path: '' }), { missing: 'path' });
  });

  it('refuses other template actions', () => {
    assert.throws(() => parseLabelTemplate('{{ .Annotations.summary }}'), {
      message:
        'unsupported template action "{{ .Annotations.summary }}": only {{ .Labels.<name> }} is allowed',
    });
    assert.throws(() => parseLabelTemplate('{{ .Labels.path '), {
      message: 'unbalanced "{{" or "}}" in "{{ .Labels.path "',
    });
    assert.throws(() => parseLabelTemplate('x }}'), { message: 'unbalanced "{{" or "}}" in "x }}"' });
  });
});

describe('Prometheus durations', () => {
  it('parses units largest first', () => {
    assert.equal(parseDurationMs('0'), 0);
    assert.equal(parseDurationMs('500ms'), 500);
    assert.equal(parseDurationMs('30s'), 30_000);
    assert.equal(parseDurationMs('1h30m'), 5_400_000);
    assert.equal(parseDurationMs('1d2h3m4s5ms'), 93_784_005);
    assert.equal(parseDurationMs('1w'), 604_800_000);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '5', '5x', '1m1h', '1s500', ' 1s', '1.5s', '-1s', '1ms1s']) {
      assert.equal(parseDurationMs(bad), null, bad);
    }
  });

  it('formats back', () => {
    assert.equal(formatDurationMs(0), '0s');
    assert.equal(formatDurationMs(5_400_000), '1h30m');
    assert.equal(formatDurationMs(93_784_005), '1d2h3m4s5ms');
  });
});
