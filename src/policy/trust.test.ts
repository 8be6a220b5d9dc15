import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPolicySettings, type TrustPolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';
import { hasApprovalLabel, isTrusted, revokesApproval, trustRejection, withoutApproval } from './trust.js';

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

const trust: TrustPolicy = defaultPolicySettings.trust;

test('owners, members and collaborators are trusted by default; other associations are not', () => {
  for (const a of ['OWNER', 'MEMBER', 'COLLABORATOR'] as const) assert.equal(isTrusted(pr({ authorAssociation: a }), trust), true, a);
  for (const a of ['CONTRIBUTOR', 'FIRST_TIME_CONTRIBUTOR', 'FIRST_TIMER', 'MANNEQUIN', 'NONE'] as const) {
    assert.equal(isTrusted(pr({ authorAssociation: a }), trust), false, a);
  }
});

test('a fork is never trusted, whoever its author is', () => {
  assert.equal(isTrusted(pr({ fork: true, authorAssociation: 'OWNER' }), trust), false);
  assert.match(trustRejection(pr({ fork: true, authorAssociation: 'OWNER' }), trust)!, /forks.*"preview-approved"/);
});

test('the trusted associations are configurable', () => {
  const onlyOwners: TrustPolicy = { ...trust, associations: ['OWNER'] };
  assert.equal(isTrusted(pr({ authorAssociation: 'MEMBER' }), onlyOwners), false);
  assert.match(trustRejection(pr({ authorAssociation: 'MEMBER' }), onlyOwners)!, /MEMBER/);
});

test('the approval label (case-insensitive, configurable) admits an untrusted pull request', () => {
  assert.equal(trustRejection(pr({ fork: true }), trust) !== undefined, true);
  assert.equal(trustRejection(pr({ fork: true, labels: ['Preview-Approved'] }), trust), undefined);
  const custom: TrustPolicy = { ...trust, approvalLabel: 'ok-to-test' };
  assert.equal(hasApprovalLabel(pr({ labels: ['preview-approved'] }), custom), false);
  assert.equal(trustRejection(pr({ authorAssociation: 'NONE', labels: ['ok-to-test'] }), custom), undefined);
});

test('a new push from an approved untrusted pull request revokes the approval; nothing else does', () => {
  const approvedFork = pr({ fork: true, labels: ['preview-approved', 'bug'] });
  assert.equal(revokesApproval('synchronize', approvedFork, trust), true);
  for (const action of ['opened', 'labeled', 'reopened', 'edited', 'ready_for_review']) {
    assert.equal(revokesApproval(action, approvedFork, trust), false, action);
  }
  assert.equal(revokesApproval('synchronize', pr({ labels: ['preview-approved'] }), trust), false, 'a trusted PR has nothing to revoke');
  assert.equal(revokesApproval('synchronize', pr({ fork: true }), trust), false, 'no approval to revoke');
  assert.deepEqual(withoutApproval(approvedFork, trust).labels, ['bug']);
  assert.equal(trustRejection(withoutApproval(approvedFork, trust), trust) !== undefined, true);
});
