import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidGitInputError } from './git-errors.js';
import {
  validateBranch,
  validateCloneUrl,
  validateOwner,
  validateRepo,
  validateRepositoryPath,
  validateSha,
} from './repository-coordinates.js';

function rejects(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => err instanceof InvalidGitInputError && err.field === field);
}

test('owners follow GitHub login rules', () => {
  for (const ok of ['octo-org', 'a', 'A1', 'x'.repeat(39), 'old-account-']) assert.equal(validateOwner(ok), ok);
  for (const bad of ['', '-x', 'a/b', 'a b', '..', 'x'.repeat(40), 'a_b', 'ä', '--upload-pack=x'])
    rejects(() => validateOwner(bad), 'owner');
});

test('repository names follow GitHub rules and cannot climb directories', () => {
  for (const ok of ['preview-app', 'a.b_c-d', '.github', 'x'.repeat(100)]) assert.equal(validateRepo(ok), ok);
  for (const bad of ['', '.', '..', 'a/b', '../x', 'a b', 'x'.repeat(101), 'a\0b']) rejects(() => validateRepo(bad), 'repo');
});

test('only full SHAs pass, normalised to lower case; refs and abbreviations do not', () => {
  const sha1 = 'A'.repeat(40);
  assert.equal(validateSha(sha1), 'a'.repeat(40));
  assert.equal(validateSha('0'.repeat(64)), '0'.repeat(64));
  for (const bad of [
    'main',
    'HEAD',
    'a'.repeat(39),
    'a'.repeat(41),
    'g'.repeat(40),
    `${'a'.repeat(40)}^{commit}`,
    `-${'a'.repeat(39)}`,
    'refs/pull/1/head',
  ]) {
    rejects(() => validateSha(bad), 'sha');
  }
});

test('branch names follow git check-ref-format', () => {
  for (const ok of ['main', 'release/1.2', 'feature/x-y_z', 'v1@2']) assert.equal(validateBranch(ok), ok);
  for (const bad of [
    '',
    '-b',
    'refs/heads/main',
    'a..b',
    'a b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[',
    'a\\b',
    '@',
    'a@{1}',
    'a/',
    'a.',
    'a//b',
    '.hidden',
    'a/.b',
    'x.lock',
    'a/b.lock/c',
  ]) {
    rejects(() => validateBranch(bad), 'branch');
  }
});

test('clone URLs: allowed protocols only, no credentials, no query', () => {
  assert.equal(validateCloneUrl('https://github.com/o/r.git', ['https:']).href, 'https://github.com/o/r.git');
  assert.equal(validateCloneUrl('file:///tmp/o/r.git', ['https:', 'file:']).protocol, 'file:');
  rejects(() => validateCloneUrl('file:///tmp/o/r.git', ['https:']), 'cloneUrl');
  rejects(() => validateCloneUrl('ext::sh -c touch% /tmp/pwned', ['https:']), 'cloneUrl');
  rejects(() => validateCloneUrl('--upload-pack=touch /tmp/x', ['https:']), 'cloneUrl');
  rejects(() => validateCloneUrl('/tmp/o/r.git', ['https:', 'file:']), 'cloneUrl');
  rejects(() => validateCloneUrl('https://github.com/o/r.git?x=1', ['https:']), 'cloneUrl');
  // The credentials themselves never appear in the error.
  assert.throws(
    () => validateCloneUrl('https://x-access-token:ghs_secret@github.com/o/r.git', ['https:']),
    (err: Error) => {
      return err instanceof InvalidGitInputError && err.field === 'cloneUrl' && !err.message.includes('ghs_secret');
    },
  );
});

test('repository paths stay inside the repository', () => {
  for (const ok of ['.preview/preview.yaml', 'a', 'a/b/c.ts', '-dash', 'a:b']) assert.equal(validateRepositoryPath(ok), ok);
  for (const bad of ['', '/etc/passwd', '../x', 'a/../b', 'a//b', './a', 'a/', 'a\\b', 'a\nb'])
    rejects(() => validateRepositoryPath(bad), 'path');
});
