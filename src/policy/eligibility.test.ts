import { test } from 'node:test';
import assert from 'node:assert/strict';
import { environmentEligibility } from './eligibility.js';
import { effectivePolicy, type PolicyConfig } from './policy-config.js';
import { resolvePolicyConfig } from './policy-validation.js';
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

const config: PolicyConfig = resolvePolicyConfig({
  filters: { labels: { exclude: ['no-preview'] } },
  repositories: { 'acme/legacy': { enabled: false } },
});
const shop = effectivePolicy(config, { owner: 'acme', name: 'shop' });

test('an open, trusted pull request that passes the filters is eligible', () => {
  assert.deepEqual(environmentEligibility(pr(), shop), { eligible: true });
});

test('closed or merged: not eligible, whatever else holds', () => {
  assert.deepEqual(environmentEligibility(pr({ state: 'closed', merged: true }), shop), {
    eligible: false,
    rule: 'closed',
    reason: 'the pull request was merged',
  });
  assert.deepEqual(environmentEligibility(pr({ state: 'closed' }), shop), {
    eligible: false,
    rule: 'closed',
    reason: 'the pull request was closed',
  });
});

test('a disabled repository gets no environments', () => {
  const legacy = effectivePolicy(config, { owner: 'ACME', name: 'Legacy' });
  const result = environmentEligibility(pr({ repository: { owner: 'ACME', name: 'Legacy', cloneUrl: 'https://x/y.git' } }), legacy);
  assert.equal(result.eligible, false);
  assert.equal(!result.eligible && result.rule, 'disabled');
});

test('filters are checked before trust: a draft fork is turned away as a draft', () => {
  const result = environmentEligibility(pr({ draft: true, fork: true }), shop);
  assert.equal(!result.eligible && result.rule, 'draft');
  const excluded = environmentEligibility(pr({ labels: ['no-preview', 'preview-approved'], fork: true }), shop);
  assert.equal(!excluded.eligible && excluded.rule, 'labels');
});

test('an untrusted pull request is eligible only with the approval label', () => {
  const fork = environmentEligibility(pr({ fork: true, authorAssociation: 'CONTRIBUTOR' }), shop);
  assert.equal(!fork.eligible && fork.rule, 'trust');
  assert.deepEqual(environmentEligibility(pr({ fork: true, authorAssociation: 'CONTRIBUTOR', labels: ['preview-approved'] }), shop), {
    eligible: true,
  });
});
