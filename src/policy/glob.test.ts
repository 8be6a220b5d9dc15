import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesAnyGlob, matchesGlob } from './glob.js';

test('a star stays within one branch segment, a double star crosses them', () => {
  assert.equal(matchesGlob('release/*', 'release/1.2'), true);
  assert.equal(matchesGlob('release/*', 'release/1.2/hotfix'), false);
  assert.equal(matchesGlob('release/**', 'release/1.2/hotfix'), true);
  assert.equal(matchesGlob('*', 'main'), true);
  assert.equal(matchesGlob('*', 'feature/x'), false);
  assert.equal(matchesGlob('**', 'feature/x'), true);
});

test('a question mark is one character; everything else is literal', () => {
  assert.equal(matchesGlob('v?', 'v1'), true);
  assert.equal(matchesGlob('v?', 'v10'), false);
  assert.equal(matchesGlob('main.x', 'mainXx'), false, 'a dot is not a regular-expression wildcard');
  assert.equal(matchesGlob('dependabot[bot]', 'dependabot[bot]'), true, 'brackets are literal');
  assert.equal(matchesGlob('dependabot[bot]', 'dependabotb'), false);
  assert.equal(matchesGlob('a+b', 'a+b'), true);
});

test('matching is case-sensitive unless asked otherwise (logins are not, branches are)', () => {
  assert.equal(matchesGlob('Main', 'main'), false);
  assert.equal(matchesGlob('*[BOT]', 'renovate[bot]', { caseInsensitive: true }), true);
});

test('any-of over a list; an empty list matches nothing', () => {
  assert.equal(matchesAnyGlob(['main', 'release/*'], 'release/2'), true);
  assert.equal(matchesAnyGlob(['main', 'release/*'], 'develop'), false);
  assert.equal(matchesAnyGlob([], 'main'), false);
});
