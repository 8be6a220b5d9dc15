import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webhookExample } from '../../test/github-emulator/webhook-delivery.js';
import { effectivePolicy } from '../policy/policy-config.js';
import { resolvePolicyConfig } from '../policy/policy-validation.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { decide, specProblems } from './pull-request-decision.js';
import { environmentName } from './pull-request-environment-name.js';
import { pullRequestFacts } from './pull-request-payload.js';

const config = resolvePolicyConfig({ repositories: { 'Codertocat/Hello-World': { budgets: { ttl: '24h' } } } });

function facts(action: string, adjust: (pr: Record<string, any>) => void = () => {}): PullRequestFacts {
  const pr = (webhookExample('pull_request', action) as Record<string, any>).pull_request;
  adjust(pr);
  return pullRequestFacts(pr);
}

test('an opened pull request becomes exactly the CRD spec', () => {
  const pr = facts('opened', (p) => {
    p.labels = [{ name: 'zeta' }, { name: 'alpha' }];
  });
  const decision = decide(pr, effectivePolicy(config, pr.repository));
  assert.deepEqual(decision, {
    action: 'upsert',
    name: environmentName(pr.repository, pr.number),
    spec: {
      repository: { owner: 'Codertocat', name: 'Hello-World', cloneUrl: 'https://github.com/Codertocat/Hello-World.git' },
      pullRequest: {
        number: 2,
        headSha: 'ec26c3e57ca3a959ca5aad62de7213c562f8c821',
        headRef: 'changes',
        baseRef: 'master',
        author: 'Codertocat',
        authorAssociation: 'OWNER',
        labels: ['alpha', 'zeta'],
        draft: false,
        fork: false,
        updatedAt: '2019-05-15T15:20:33Z',
      },
    },
  });
  // The policy's TTL (24h here) is not written: the controller weighs it against the repository's `ttl`.
  assert.equal((decision as { spec?: { ttl?: string } }).spec?.ttl, undefined);
});

test('the same facts always give the same spec (label order does not matter)', () => {
  const a = facts('opened', (p) => {
    p.labels = [{ name: 'b' }, { name: 'a' }];
  });
  const b = facts('opened', (p) => {
    p.labels = [{ name: 'a' }, { name: 'b' }];
  });
  assert.deepEqual(decide(a, effectivePolicy(config, a.repository)), decide(b, effectivePolicy(config, b.repository)));
});

test('closed (merged or not) deletes', () => {
  const closed = facts('closed');
  const policy = effectivePolicy(config, closed.repository);
  assert.deepEqual(decide(closed, policy), {
    action: 'delete',
    name: environmentName(closed.repository, closed.number),
    rule: 'closed',
    reason: 'the pull request was closed',
  });
  const merged = facts('closed', (p) => {
    p.merged = true;
  });
  assert.equal(decide(merged, policy).action, 'delete');
});

test('a draft, an unapproved fork, a filtered label: delete (the environment must not exist)', () => {
  const draft = facts('converted_to_draft');
  assert.deepEqual(
    { ...decide(draft, effectivePolicy(config, draft.repository)), reason: undefined },
    {
      action: 'delete',
      name: environmentName(draft.repository, draft.number),
      rule: 'draft',
      reason: undefined,
    },
  );
  const fork = facts('opened', (p) => {
    p.head.repo = { ...p.head.repo, id: 1 };
    p.author_association = 'CONTRIBUTOR';
  });
  const forkDecision = decide(fork, effectivePolicy(config, fork.repository));
  assert.equal(forkDecision.action === 'delete' && forkDecision.rule, 'trust');
  const approved = facts('opened', (p) => {
    p.head.repo = { ...p.head.repo, id: 1 };
    p.labels = [{ name: 'preview-approved' }];
  });
  const approvedDecision = decide(approved, effectivePolicy(config, approved.repository));
  assert.equal(approvedDecision.action, 'upsert');
  assert.equal(approvedDecision.action === 'upsert' && approvedDecision.spec.pullRequest.fork, true);
});

test('facts the CRD would reject are ignored, not written', () => {
  const odd = facts('opened', (p) => {
    p.head.sha = 'ABC';
  });
  const decision = decide(odd, effectivePolicy(config, odd.repository));
  assert.equal(decision.action, 'ignore');
  assert.match(decision.action === 'ignore' ? decision.reason : '', /head SHA/);
  // ...but a closed pull request with odd facts is still deleted.
  const closed = facts('closed', (p) => {
    p.head.sha = 'ABC';
  });
  assert.equal(decide(closed, effectivePolicy(config, closed.repository)).action, 'delete');
});

test('specProblems mirrors the CRD schema', () => {
  const pr = facts('opened');
  const decision = decide(pr, effectivePolicy(config, pr.repository));
  assert.ok(decision.action === 'upsert');
  const spec = decision.spec;
  assert.deepEqual(specProblems(spec), []);
  assert.equal(specProblems({ ...spec, repository: { ...spec.repository, cloneUrl: '/srv/git/x' } }).length, 1);
  assert.equal(specProblems({ ...spec, repository: { ...spec.repository, owner: '-bad-' } }).length, 1);
  assert.equal(specProblems({ ...spec, ttl: '30s' }).length, 1);
  assert.equal(
    specProblems({ ...spec, pullRequest: { ...spec.pullRequest, labels: Array.from({ length: 101 }, (_, i) => `l${i}`) } }).length,
    1,
  );
  assert.equal(specProblems({ ...spec, pullRequest: { ...spec.pullRequest, headSha: 'f'.repeat(64) } }).length, 0, 'SHA-256 repositories');
});
