import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webhookExample } from '../../test/github-emulator/webhook-delivery.js';
import { PayloadError, pullRequestFacts } from './pull-request-payload.js';

type Json = Record<string, any>;

function example(action: string): Json {
  return webhookExample('pull_request', action) as Json;
}

test('the published `opened` example maps to its facts', () => {
  const payload = example('opened');
  const pr = payload.pull_request;
  assert.deepEqual(pullRequestFacts(pr), {
    repository: { owner: pr.base.repo.owner.login, name: pr.base.repo.name, cloneUrl: pr.base.repo.clone_url },
    number: pr.number,
    state: 'open',
    merged: false,
    headSha: pr.head.sha,
    headRef: pr.head.ref,
    baseRef: pr.base.ref,
    author: pr.user.login,
    authorAssociation: pr.author_association,
    labels: pr.labels.map((l: Json) => l.name),
    draft: pr.draft,
    fork: false,
    updatedAt: pr.updated_at,
  });
});

test('updated_at is required, checked as RFC 3339 and kept in UTC, so equal times compare equal as strings', () => {
  const at = (value: unknown) => {
    const pr = example('opened').pull_request;
    pr.updated_at = value;
    return pullRequestFacts(pr).updatedAt;
  };
  assert.equal(at('2019-05-15T15:20:33Z'), '2019-05-15T15:20:33Z');
  assert.equal(at('2019-05-15T17:20:33+02:00'), '2019-05-15T15:20:33Z');
  assert.equal(at('2019-05-15T15:20:33.250Z'), '2019-05-15T15:20:33.250Z');
  for (const bad of [undefined, '', 'yesterday', 'May 15 2019', '2019-05-15', 1557933633]) {
    assert.throws(
      () => at(bad),
      (err: unknown) => err instanceof PayloadError && err.path === 'pull_request.updated_at',
      String(bad),
    );
  }
});

test('every action the operator uses has a published example that maps', () => {
  for (const action of ['opened', 'reopened', 'synchronize', 'ready_for_review', 'converted_to_draft', 'labeled', 'unlabeled', 'closed']) {
    const payload = example(action);
    assert.equal(payload.action, action, `the example for ${action} is that action's`);
    const facts = pullRequestFacts(payload.pull_request);
    assert.equal(facts.number, payload.number, action);
    assert.match(facts.headSha, /^[0-9a-f]{40}$/, action);
  }
  assert.equal(pullRequestFacts(example('closed').pull_request).state, 'closed');
  assert.ok(pullRequestFacts(example('labeled').pull_request).labels.length > 0, 'the labeled example carries its label');
  assert.equal(pullRequestFacts(example('converted_to_draft').pull_request).draft, true);
});

test('a head repository other than the base repository is a fork; a deleted fork too', () => {
  const pr = example('opened').pull_request;
  pr.head.repo = { ...pr.head.repo, id: pr.base.repo.id + 1, full_name: 'outsider/Hello-World', fork: true };
  assert.equal(pullRequestFacts(pr).fork, true);
  pr.head.repo = null;
  assert.equal(pullRequestFacts(pr).fork, true);
});

test('merged is read from `merged` (webhooks) or `merged_at` (REST list items)', () => {
  const pr = example('closed').pull_request;
  assert.equal(pullRequestFacts(pr).merged, false, 'both published closed examples are unmerged');
  pr.merged = true;
  assert.equal(pullRequestFacts(pr).merged, true);
  delete pr.merged;
  pr.merged_at = '2026-01-01T00:00:00Z';
  assert.equal(pullRequestFacts(pr).merged, true);
});

test('an association GitHub may add later is not trusted: it reads as NONE', () => {
  const pr = example('opened').pull_request;
  pr.author_association = 'STAFF';
  assert.equal(pullRequestFacts(pr).authorAssociation, 'NONE');
});

test('the clone URL can be redirected (tests, mirrors)', () => {
  const pr = example('opened').pull_request;
  const facts = pullRequestFacts(pr, { cloneUrl: (r) => `file:///srv/git/${r.owner}/${r.name}.git` });
  assert.equal(facts.repository.cloneUrl, `file:///srv/git/${pr.base.repo.owner.login}/${pr.base.repo.name}.git`);
});

test('a payload missing what the decision needs names the field', () => {
  const cases: Array<[string, (pr: Json) => void]> = [
    [
      'pull_request.head.sha',
      (pr) => {
        delete pr.head.sha;
      },
    ],
    [
      'pull_request.base.repo',
      (pr) => {
        pr.base.repo = 'x';
      },
    ],
    [
      'pull_request.number',
      (pr) => {
        pr.number = '2';
      },
    ],
    [
      'pull_request.state',
      (pr) => {
        pr.state = 'draft';
      },
    ],
    [
      'pull_request.labels[0].name',
      (pr) => {
        pr.labels = [{}];
      },
    ],
    [
      'pull_request.user.login',
      (pr) => {
        pr.user = {};
      },
    ],
  ];
  for (const [path, breakIt] of cases) {
    const pr = example('opened').pull_request;
    breakIt(pr);
    assert.throws(
      () => pullRequestFacts(pr),
      (err: unknown) => err instanceof PayloadError && err.path === path,
      path,
    );
  }
  assert.throws(() => pullRequestFacts(undefined), PayloadError);
});
