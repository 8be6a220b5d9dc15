import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterRejection } from './filters.js';
import { applyOverrides, defaultPolicySettings, type FilterPolicy, type PolicyOverrides } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';

function pr(overrides: Partial<PullRequestFacts> = {}): PullRequestFacts {
  return {
    repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://github.com/acme/shop.git' },
    number: 7,
    state: 'open',
    merged: false,
    headSha: 'a'.repeat(40),
    headRef: 'feature-7',
    baseRef: 'main',
    author: 'alice',
    authorAssociation: 'MEMBER',
    labels: [],
    draft: false,
    fork: false,
    ...overrides,
  };
}

function filters(overrides: PolicyOverrides['filters'] = {}): FilterPolicy {
  return applyOverrides(defaultPolicySettings, { filters: overrides }).filters;
}

test('the default filters let an ordinary pull request through', () => {
  assert.equal(filterRejection(pr(), filters()), undefined);
});

test('drafts are skipped by default and can be included', () => {
  assert.equal(filterRejection(pr({ draft: true }), filters())?.rule, 'draft');
  assert.equal(filterRejection(pr({ draft: true }), filters({ skipDrafts: false })), undefined);
});

test('base branch: any when no pattern, else one pattern must match', () => {
  const f = filters({ baseBranches: ['main', 'release/*'] });
  assert.equal(filterRejection(pr({ baseRef: 'main' }), f), undefined);
  assert.equal(filterRejection(pr({ baseRef: 'release/3' }), f), undefined);
  const rejected = filterRejection(pr({ baseRef: 'develop' }), f);
  assert.equal(rejected?.rule, 'base-branch');
  assert.match(rejected!.reason, /develop/);
  assert.equal(filterRejection(pr({ baseRef: 'develop' }), filters()), undefined);
});

test('labels any-of: at least one, compared case-insensitively', () => {
  const f = filters({ labels: { anyOf: ['preview', 'deploy-me'] } });
  assert.equal(filterRejection(pr({ labels: ['bug', 'Deploy-Me'] }), f), undefined);
  assert.equal(filterRejection(pr({ labels: ['bug'] }), f)?.rule, 'labels');
  assert.equal(filterRejection(pr({ labels: [] }), f)?.rule, 'labels');
});

test('labels all-of: every one, and the reason names what is missing', () => {
  const f = filters({ labels: { allOf: ['preview', 'backend'] } });
  assert.equal(filterRejection(pr({ labels: ['backend', 'preview', 'x'] }), f), undefined);
  const rejected = filterRejection(pr({ labels: ['preview'] }), f);
  assert.equal(rejected?.rule, 'labels');
  assert.match(rejected!.reason, /"backend"/);
  assert.doesNotMatch(rejected!.reason, /"preview"/);
});

test('an excluded label wins over any-of and all-of', () => {
  const f = filters({ labels: { anyOf: ['preview'], allOf: ['preview'], exclude: ['no-preview'] } });
  assert.equal(filterRejection(pr({ labels: ['preview'] }), f), undefined);
  const rejected = filterRejection(pr({ labels: ['preview', 'NO-PREVIEW'] }), f);
  assert.equal(rejected?.rule, 'labels');
  assert.match(rejected!.reason, /no-preview/);
});

test('author deny list (globs, case-insensitive) wins over the allow list', () => {
  const f = filters({ authors: { allow: ['alice', '*[bot]'], deny: ['dependabot[bot]'] } });
  assert.equal(filterRejection(pr({ author: 'Alice' }), f), undefined);
  assert.equal(filterRejection(pr({ author: 'renovate[bot]' }), f), undefined);
  assert.equal(filterRejection(pr({ author: 'dependabot[bot]' }), f)?.rule, 'author');
  assert.equal(filterRejection(pr({ author: 'mallory' }), f)?.rule, 'author');
});

test('an empty allow list allows every author; deny alone still denies', () => {
  const f = filters({ authors: { deny: ['mallory'] } });
  assert.equal(filterRejection(pr({ author: 'bob' }), f), undefined);
  assert.equal(filterRejection(pr({ author: 'MALLORY' }), f)?.rule, 'author');
});
