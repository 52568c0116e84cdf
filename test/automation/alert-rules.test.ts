import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadAlertRules, parseAlertRules } from '../../src/automation/alert-rules.ts';
import { isLimitswitchError } from '../../src/shared/errors.ts';

const RULE = `rules:
  - name: coffee
    matchers: ['alertname="CoffeeOverloaded"']
    zone: limitreq_uri
    key: "{{ .Labels.path }}"
    value: "1"
    ttl: 5m
`;

/** The message of the RL_ERR_ALERT_RULES_INVALID thrown for `text`. */
function problem(text: string): string {
  try {
    parseAlertRules(text, 'rules.yaml');
  } catch (err) {
    assert.ok(isLimitswitchError(err));
    assert.equal(err.code, 'RL_ERR_ALERT_RULES_INVALID');
    return err.message;
  }
  assert.fail('expected the rules to be refused');
}

describe('alert rules file', () => {
  it('compiles a rule with its defaults', () => {
    const { rules, maxBodyBytes, source } = parseAlertRules(RULE, 'rules.yaml');
    assert.equal(source, 'rules.yaml');
    assert.equal(maxBodyBytes, 1024 * 1024);
    assert.equal(rules.length, 1);
    const [rule] = rules;
    assert.equal(rule!.name, 'coffee');
    assert.equal(rule!.zone, 'limitreq_uri');
    assert.equal(rule!.onResolve, 'delete');
    assert.equal(rule!.ttlMs, 300_000);
    assert.equal(rule!.minHoldMs, 0);
    assert.equal(rule!.dryRun, false);
    assert.deepEqual(rule!.key.render({ path: '/coffee' }), { value: '/coffee' });
    assert.equal(rule!.matchers[0]!.matches({ alertname: 'CoffeeOverloaded' }), true);
  });

  it('takes every field; a number value is stored as its text', () => {
    const { rules, maxBodyBytes } = parseAlertRules(
      `max_body_bytes: 65536
rules:
  - name: tea.ratio-1
    matchers: [alertname=TeaRejections, 'path=~"/tea.*"']
    zone: limitreq_uri
    key: /tea
    value: 1
    on_resolve: restore
    ttl: 1h30m
    min_hold: 2m
    dry_run: true
`,
      'rules.yaml',
    );
    assert.equal(maxBodyBytes, 65536);
    const rule = rules[0]!;
    assert.deepEqual(rule.value.render({}), { value: '1' });
    assert.equal(rule.onResolve, 'restore');
    assert.equal(rule.ttlMs, 5_400_000);
    assert.equal(rule.minHoldMs, 120_000);
    assert.equal(rule.dryRun, true);
  });

  it('an empty rule list is valid (the webhook then matches nothing)', () => {
    assert.deepEqual(parseAlertRules('rules: []\n', 'rules.yaml').rules, []);
  });

  it('YAML syntax errors name the file and line', () => {
    assert.equal(
      problem('rules:\n  - name: a\n    ttl: [\n'),
      'rules.yaml:4: Flow sequence in block collection must be sufficiently indented and end with a ]',
    );
    assert.equal(problem('rules:\n  - name: a\n    name: b\n'), 'rules.yaml:3: Map keys must be unique');
  });

  it('schema errors name the file, line and field', () => {
    assert.equal(problem(''), 'rules.yaml:1: (file): must be an object');
    assert.equal(problem('rules: 3\n'), 'rules.yaml:1: rules: must be an array');
    assert.equal(problem(`${RULE}    tll: 3\n`), 'rules.yaml:8: rules[0].tll: unknown field');
    assert.equal(problem(RULE.replace('    ttl: 5m\n', '')), 'rules.yaml:2: rules[0]: missing field "ttl"');
    assert.equal(
      problem(RULE.replace('ttl: 5m', 'ttl: 5x')),
      'rules.yaml:7: rules[0].ttl: invalid value (expected a duration such as 30s, 5m, 1h30m)',
    );
    assert.equal(
      problem(`${RULE}    on_resolve: keep\n`),
      'rules.yaml:8: rules[0].on_resolve: must be one of delete, restore',
    );
    assert.equal(
      problem(RULE.replace('value: "1"', 'value: true')),
      'rules.yaml:6: rules[0].value: must be a string or a number',
    );
    assert.equal(
      problem(RULE.replace('name: coffee', 'name: "coffee shop"')),
      'rules.yaml:2: rules[0].name: invalid value (expected letters, digits, "_", "." or "-", at most 64)',
    );
    assert.equal(
      problem(RULE.replace(`['alertname="CoffeeOverloaded"']`, '[]')),
      'rules.yaml:3: rules[0].matchers: must NOT have fewer than 1 items',
    );
  });

  it('reports every meaning error at once, each with its line', () => {
    const text = `rules:
  - name: a
    matchers: [a=b, "c=~(x"]
    zone: limitreq_uri
    key: "{{ .Annotations.x }}"
    value: "1"
    ttl: 1m1h
    min_hold: 10m
  - name: a
    matchers: [a=b]
    zone: z
    key: k
    value: "1"
    ttl: 0s
  - name: b
    matchers: [a=b]
    zone: z
    key: k
    value: "1"
    ttl: 1m
    min_hold: 2m
`;
    assert.equal(
      problem(text),
      [
        'rules.yaml:3: rules[0].matchers[1]: invalid matcher "c=~(x": Invalid regular expression: /^(?:(x)$/su: Unterminated group',
        'rules.yaml:5: rules[0].key: unsupported template action "{{ .Annotations.x }}": only {{ .Labels.<name> }} is allowed',
        'rules.yaml:7: rules[0].ttl: invalid duration "1m1h" (units: y w d h m s ms, largest first)',
        'rules.yaml:9: rules[1].name: duplicate rule name "a"',
        'rules.yaml:14: rules[1].ttl: must be longer than 0s',
        'rules.yaml:21: rules[2].min_hold: must not be longer than ttl (1m)',
      ].join('\n'),
    );
  });

  // Issue 18 §3.7: schema errors hid the rest, so a file's errors came two at a time.
  it('reports schema and meaning errors of every rule in one pass, in line order', () => {
    const text = `rules:
  - name: a
    matchers: [a=b]
    zone: limitreq_uri
    key: k
    value: "1"
    ttl: 10 minutes
  - name: a
    matchers: ["c=~(x"]
    zone: limitreq_uri
    key: k
    value: "1"
    ttl: 1m
    tll: 3
  - name: c
    matchers: [a=b]
    zone: limitreq_uri
    key: k
    value: "1"
`;
    assert.equal(
      problem(text),
      [
        'rules.yaml:7: rules[0].ttl: invalid value (expected a duration such as 30s, 5m, 1h30m)',
        'rules.yaml:8: rules[1].name: duplicate rule name "a"',
        'rules.yaml:9: rules[1].matchers[0]: invalid matcher "c=~(x": Invalid regular expression: /^(?:(x)$/su: Unterminated group',
        'rules.yaml:14: rules[1].tll: unknown field',
        'rules.yaml:15: rules[2]: missing field "ttl"',
      ].join('\n'),
    );
  });

  it('with the keyval zones of -c, a rule naming another zone is an error too', () => {
    const text = `${RULE}  - name: other
    matchers: [a=b]
    zone: nozone
    key: k
    value: "1"
    ttl: 1m
`;
    assert.throws(() => parseAlertRules(text, 'rules.yaml', { keyvalZones: ['limitreq_uri'] }), {
      message: 'rules.yaml:10: rules[1].zone: unknown keyval zone "nozone" (not a keyval_zone of -c FILE)',
    });
    // Without -c the zones are the replicas' to declare: not checked here.
    assert.equal(parseAlertRules(text, 'rules.yaml').rules.length, 2);
  });

  it('loads from a file, naming it in errors', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-rules-'));
    try {
      const file = join(dir, 'alert-rules.yaml');
      writeFileSync(file, RULE);
      assert.equal(loadAlertRules(file).rules[0]!.name, 'coffee');
      writeFileSync(file, RULE.replace('ttl: 5m', 'ttl: 0s'));
      assert.throws(() => loadAlertRules(file), {
        message: `${file}:7: rules[0].ttl: must be longer than 0s`,
      });
      assert.throws(() => loadAlertRules(join(dir, 'missing.yaml')), {
        code: 'RL_ERR_ALERT_RULES_INVALID',
        message: `${join(dir, 'missing.yaml')}: ENOENT: no such file or directory, open '${join(dir, 'missing.yaml')}'`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the example rules file in deploy/ is valid', () => {
    const file = new URL('../../deploy/automation/alert-rules.yaml', import.meta.url);
    const rules = parseAlertRules(readFileSync(file, 'utf8'), 'deploy/automation/alert-rules.yaml');
    assert.ok(rules.rules.length >= 2);
  });
});
