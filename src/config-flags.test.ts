import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.js';
import { readFlags } from './config-flags.js';
import { settings } from './config-settings.js';

function read(args: string[]) {
  const issues: { setting: string; message: string }[] = [];
  const values = Object.fromEntries(readFlags(args, issues));
  return { values, issues: issues.map((i) => `${i.setting}: ${i.message}`) };
}

test('every setting of the table is a flag, with no code of its own', () => {
  for (const s of settings) {
    const value = s.kind === 'boolean' ? 'false' : 'x';
    assert.deepEqual(read([`--${s.flag}=${value}`]), { values: { [s.flag]: value }, issues: [] }, s.flag);
  }
});

test('--name=value and --name value; a boolean alone is true, or takes a following true or false', () => {
  const args = ['--webhook-port=1', '--metrics-port', '2', '--leader-elect', '--github-throttle', 'false', '--max-rendered-depth', '-1'];
  assert.deepEqual(read(args), {
    values: { 'webhook-port': '1', 'metrics-port': '2', 'leader-elect': 'true', 'github-throttle': 'false', 'max-rendered-depth': '-1' },
    issues: [],
  });
  assert.deepEqual(read(['--leader-elect', 'yes']), {
    values: { 'leader-elect': 'true' },
    issues: ['yes: unexpected argument (settings are written --name=value)'],
  });
});

test('unknown flags, stray arguments, short options and repeats are issues, all of them', () => {
  assert.deepEqual(read(['--no-such', 'value', '--webhook-port=1', 'stray', '-h', '-abc', '--webhook-port=2']).issues, [
    '--no-such: unknown flag (see --help)',
    'stray: unexpected argument (settings are written --name=value)',
    '-h: unexpected argument (settings are written --name=value)',
    '-abc: unexpected argument (settings are written --name=value)',
    '--webhook-port: given more than once',
  ]);
});

test('a setting that needs a value never takes "true" or the next flag as one', () => {
  assert.deepEqual(read(['--webhook-secret']).issues, ['--webhook-secret: needs a value (written --webhook-secret=value)']);
  assert.deepEqual(read(['--preview-domain', '--webhook-port=9000']), {
    values: { 'webhook-port': '9000' },
    issues: ['--preview-domain: needs a value (written --preview-domain=value)'],
  });
});

test('a boolean setting written otherwise than true or false is named', () => {
  assert.throws(
    () => loadConfig({ args: ['--controllers=algorithm', '--leader-elect=yes'], env: {}, purpose: 'run' }),
    (err) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(
        err.issues.map((i) => i.setting),
        ['--leader-elect (PREVIEW_OPERATOR_LEADER_ELECT)'],
      );
      return true;
    },
  );
});
