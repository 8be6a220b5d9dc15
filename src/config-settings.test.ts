import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { settingsReference } from './config-settings.js';

test('docs/configuration.md lists every setting as the code defines it', () => {
  const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  const begin = doc.indexOf('-->\n', doc.indexOf('<!-- settings:begin')) + 4;
  const end = doc.indexOf('<!-- settings:end -->');
  assert.equal(
    doc.slice(begin, end),
    settingsReference(),
    'regenerate the reference: node --import tsx -e "import(\'./src/config-settings.ts\').then(m => process.stdout.write(m.settingsReference()))"',
  );
});
