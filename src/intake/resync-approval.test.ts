import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPolicySettings } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { resyncApproval } from './resync-approval.js';

const sha = (c: string) => c.repeat(40);
const pr = (over: Partial<PullRequestFacts>): PullRequestFacts => ({
  repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://github.com/acme/shop.git' },
  number: 4,
  state: 'open',
  merged: false,
  headSha: sha('b'),
  headRef: 'patch-4',
  baseRef: 'main',
  author: 'mallory',
  authorAssociation: 'CONTRIBUTOR',
  labels: ['preview-approved', 'bug'],
  draft: false,
  fork: true,
  ...over,
});
const trust = defaultPolicySettings.trust;
/** An environment at `headSha` on `baseRef`. */
const at = (headSha: string, baseRef = 'main') => ({ headSha, baseRef });

describe('resyncApproval', () => {
  it('keeps the approval of an untrusted pull request only at the SHA its environment already runs', () => {
    const confirmed = resyncApproval(pr({}), trust, at(sha('b')));
    assert.equal(confirmed.unconfirmed, false);
    assert.deepEqual(confirmed.facts.labels, ['preview-approved', 'bug']);
  });

  it('drops the label after a push the webhook approved nothing for (the label removal failed)', () => {
    const moved = resyncApproval(pr({}), trust, at(sha('a')));
    assert.equal(moved.unconfirmed, true);
    assert.deepEqual(moved.facts.labels, ['bug']);
  });

  it('drops the label where the environment runs another base (retargeted: that base was not approved)', () => {
    const retargeted = resyncApproval(pr({ baseRef: 'experimental' }), trust, at(sha('b'), 'main'));
    assert.equal(retargeted.unconfirmed, true);
    assert.deepEqual(retargeted.facts.labels, ['bug']);
  });

  it('drops the label when no environment exists (an approval the resync cannot tie to a commit)', () => {
    assert.equal(resyncApproval(pr({}), trust, undefined).unconfirmed, true);
  });

  it('leaves trusted and unlabeled pull requests alone', () => {
    assert.equal(resyncApproval(pr({ fork: false, authorAssociation: 'MEMBER' }), trust, undefined).unconfirmed, false);
    assert.equal(resyncApproval(pr({ labels: ['bug'] }), trust, undefined).unconfirmed, false);
  });
});
