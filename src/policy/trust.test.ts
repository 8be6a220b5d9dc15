import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPolicySettings, type TrustPolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';
import { approvalHolds, hasApprovalLabel, isTrusted, revokesApproval, trustRejection, withoutApproval } from './trust.js';

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

test('the approval holds at the head SHA it was given on; a push, a new base, or a delivery at another SHA, revokes it', () => {
  const A = 'a'.repeat(40);
  /** The approval as given: at commit A, on the base branch main. */
  const atA = { headSha: A, baseRef: 'main' };
  const approvedFork = pr({ fork: true, labels: ['preview-approved', 'bug'], headSha: A });
  const pushed = { ...approvedFork, headSha: 'b'.repeat(40) };
  // Giving the label ties it to the head SHA the delivery carries.
  const maintainer = { login: 'octocat', type: 'User' };
  assert.equal(revokesApproval({ action: 'labeled', label: 'Preview-Approved', sender: maintainer }, pushed, trust, atA), false);
  assert.equal(revokesApproval({ action: 'opened', sender: maintainer }, pushed, trust, undefined), false);
  // Given by the author (triage access, or opened with the label through the API) or by a bot: no approval, and the label goes.
  for (const sender of [{ login: 'ALICE', type: 'User' }, { login: 'labeler[bot]', type: 'Bot' }, undefined]) {
    for (const delivery of [
      { action: 'labeled', label: 'preview-approved', sender },
      { action: 'opened', sender },
    ]) {
      assert.equal(approvalHolds(delivery, pushed, trust, undefined), false, JSON.stringify(delivery));
      assert.equal(revokesApproval(delivery, pushed, trust, undefined), true, JSON.stringify(delivery));
    }
  }
  // Labelled again by the author, what a maintainer approved at this commit before does not count: GitHub sends a
  // `labeled` only for a label that was not there, so the maintainer had withdrawn it.
  const relabeled = { action: 'labeled', label: 'preview-approved', sender: { login: 'alice' } };
  assert.equal(approvalHolds(relabeled, approvedFork, trust, atA), false);
  assert.equal(revokesApproval(relabeled, approvedFork, trust, atA), true);
  // At the SHA it was tied to, nothing revokes it.
  for (const action of ['labeled', 'unlabeled', 'reopened', 'ready_for_review', 'converted_to_draft']) {
    assert.equal(revokesApproval({ action, label: 'bug' }, approvedFork, trust, atA), false, action);
  }
  // A new base (the only `edited` that reaches the trust rules) is rendered from that base's configuration: revoked, like a push.
  assert.equal(approvalHolds({ action: 'edited' }, approvedFork, trust, atA), false);
  assert.equal(revokesApproval({ action: 'edited' }, approvedFork, trust, atA), true);
  assert.equal(revokesApproval({ action: 'edited' }, approvedFork, trust, undefined), true);
  // At another SHA (a reopen after commits pushed while closed; another label before the revocation landed): revoked.
  for (const action of ['synchronize', 'reopened', 'ready_for_review', 'labeled', 'edited']) {
    assert.equal(revokesApproval({ action, label: 'bug' }, pushed, trust, atA), true, action);
  }
  // With no approved SHA known (a restart; the approval's own delivery still on its way) it does not hold, and only a push revokes it.
  for (const action of ['reopened', 'ready_for_review', 'labeled']) {
    assert.equal(approvalHolds({ action, label: 'bug' }, approvedFork, trust, undefined), false, action);
    assert.equal(revokesApproval({ action, label: 'bug' }, approvedFork, trust, undefined), false, `${action}, no SHA known`);
  }
  assert.equal(revokesApproval({ action: 'synchronize' }, approvedFork, trust, undefined), true);
  assert.equal(approvalHolds({ action: 'reopened' }, pushed, trust, atA), false);
  assert.equal(approvalHolds({ action: 'synchronize' }, approvedFork, trust, atA), false, 'a push, even back to the approved commit');
  // At the approved commit, on another base (a retarget whose own delivery went elsewhere, or raced a close and reopen): revoked.
  const retargeted = { ...approvedFork, baseRef: 'experimental' };
  for (const action of ['reopened', 'labeled', 'ready_for_review', 'closed']) {
    assert.equal(approvalHolds({ action, label: 'size/M' }, retargeted, trust, atA), false, action);
    assert.equal(revokesApproval({ action, label: 'size/M' }, retargeted, trust, atA), true, action);
  }
  const trusted = pr({ labels: ['preview-approved'] });
  assert.equal(revokesApproval({ action: 'synchronize' }, trusted, trust, undefined), false, 'a trusted PR has nothing to revoke');
  assert.equal(revokesApproval({ action: 'synchronize' }, pr({ fork: true }), trust, undefined), false, 'no approval to revoke');
  assert.deepEqual(withoutApproval(approvedFork, trust).labels, ['bug']);
  assert.equal(trustRejection(withoutApproval(approvedFork, trust), trust) !== undefined, true);
});
