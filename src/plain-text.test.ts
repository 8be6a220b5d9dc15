import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plainText } from './plain-text.js';

test('terminal escapes, C1 controls and bidirectional overrides are dropped; tab, newline and text stay', () => {
  // Clear the screen, home the cursor, write the clipboard (OSC 52), hide what follows.
  const escapes = '\u001b[2J\u001b[H\u001b]52;c;ZWNobyBwd25lZA==\u0007Ready: True (all good)\u001b[8m';
  assert.equal(plainText(escapes), '[2J[H]52;c;ZWNobyBwd25lZA==Ready: True (all good)[8m');
  assert.equal(plainText('a\u009b2Jb'), 'a2Jb', 'the one-byte CSI of C1');
  assert.equal(plainText('\u202edeliaf skcehc\u202c'), 'deliaf skcehc');
  assert.equal(plainText('line one\n\tline two — ü ✅'), 'line one\n\tline two — ü ✅');
});
