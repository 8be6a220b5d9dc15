import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isContentAddressed } from './octokit-conditional-requests.js';

const sha = 'a'.repeat(40);

test('GETs fixed by a SHA are content-addressed: blobs, trees, commits, contents at a commit', () => {
  for (const url of [
    `https://api.github.com/repos/o/r/git/blobs/${sha}`,
    `https://api.github.com/repos/o/r/git/trees/${sha}?recursive=1`,
    `https://api.github.com/repos/o/r/git/commits/${sha}`,
    `https://api.github.com/repos/o/r/commits/${sha}`,
    `https://api.github.com/repos/o/r/contents/.preview?ref=${sha}`,
    `https://ghe.example/api/v3/repos/o/r/contents/.preview/preview.yaml?per_page=1&ref=${sha.toUpperCase()}`,
  ])
    assert.equal(isContentAddressed(url), true, url);
});

test('GETs whose answer can change are not: branches, refs, contents at a branch, pull requests, a SHA prefix', () => {
  for (const url of [
    'https://api.github.com/repos/o/r/git/ref/heads/main',
    'https://api.github.com/repos/o/r/branches/main',
    'https://api.github.com/repos/o/r/contents/.preview?ref=main',
    'https://api.github.com/repos/o/r/contents/.preview',
    'https://api.github.com/repos/o/r/commits/main',
    `https://api.github.com/repos/o/r/commits/${sha}/check-runs`,
    `https://api.github.com/repos/o/r/contents/.preview?ref=${sha}0`,
    'https://api.github.com/repos/o/r/pulls?state=open',
  ])
    assert.equal(isContentAddressed(url), false, url);
});
