import assert from 'node:assert/strict';
import { test } from 'node:test';
import { environmentView, githubWebUrl, httpUrl, lastError, type DashboardObject } from './dashboard-view.js';

const sha = 'a'.repeat(40);

function environment(status: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): DashboardObject {
  return {
    metadata: { name: 'pr-7-shop-1a2b3c', creationTimestamp: '2026-01-02T03:04:05Z' },
    spec: {
      repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://x-access-token:ghs_SECRET1@github.com/acme/shop.git' },
      pullRequest: { number: 7, headSha: sha, headRef: 'feature/x', baseRef: 'main', author: 'octocat', fork: true },
      overrides: { env: { API_TOKEN: 'SECRET2' }, images: { web: 'registry.example/web:SECRET3' } },
      ...spec,
    },
    status: {
      phase: 'Ready',
      namespace: 'pr-7-shop-1a2b3c',
      url: 'https://shop-pr-7.preview.example/',
      deployedSha: sha,
      expiresAt: '2026-01-05T03:04:05Z',
      ...status,
    },
  };
}

test('an environment becomes its view: links to GitHub, its URL, its facts', () => {
  const view = environmentView(environment(), 'https://github.com');
  assert.equal(view.name, 'pr-7-shop-1a2b3c');
  assert.equal(view.repository, 'acme/shop');
  assert.equal(view.repositoryUrl, 'https://github.com/acme/shop');
  assert.equal(view.pullRequest, 7);
  assert.equal(view.pullRequestUrl, 'https://github.com/acme/shop/pull/7');
  assert.equal(view.author, 'octocat');
  assert.equal(view.authorUrl, 'https://github.com/octocat');
  assert.equal(view.fork, true);
  assert.equal(view.phase, 'Ready');
  assert.equal(view.url, 'https://shop-pr-7.preview.example/');
  assert.equal(view.deployedSha, sha);
  assert.equal(view.createdAt, '2026-01-02T03:04:05Z');
  assert.equal(view.expiresAt, '2026-01-05T03:04:05Z');
  assert.equal(view.lastError, undefined);
});

test('no secret reaches a view: not the clone URL, not the overrides', () => {
  const json = JSON.stringify(environmentView(environment(), 'https://github.com'));
  for (const secret of ['SECRET1', 'SECRET2', 'SECRET3', 'cloneUrl', 'overrides', 'x-access-token'])
    assert.equal(json.includes(secret), false, secret);
});

test('only http(s) URLs become links; credentials in a URL drop it', () => {
  assert.equal(httpUrl('http://a.example/x'), 'http://a.example/x');
  for (const bad of [
    ' javascript:alert(1)',
    'javascript:alert(1)',
    ' https://lead.example/',
    'data:text/html,<script>1</script>',
    'https://user:pw@a.example/',
    '/relative',
    'not a url',
    42,
    undefined,
  ]) {
    assert.equal(httpUrl(bad), undefined, String(bad));
  }
  const view = environmentView(environment({ url: 'javascript:alert(document.cookie)' }), 'https://github.com');
  assert.equal(view.url, undefined);
});

test('GitHub web URLs from the API URL: github.com, Enterprise Server, an emulator', () => {
  assert.equal(githubWebUrl('https://api.github.com'), 'https://github.com');
  assert.equal(githubWebUrl('https://ghe.example.com/api/v3'), 'https://ghe.example.com');
  assert.equal(githubWebUrl('https://ghe.example.com/api/v3/'), 'https://ghe.example.com');
  assert.equal(githubWebUrl('http://127.0.0.1:4010'), 'http://127.0.0.1:4010');
});

test("the last error: a failed environment's reason, a stalled one's, a failed reconcile's; waiting is none", () => {
  const ready = (status: string, reason: string) => ({
    type: 'Ready',
    status,
    reason,
    message: `${reason} message`,
    lastTransitionTime: '2026-01-02T03:04:05Z',
  });
  const failed = environmentView(environment({ phase: 'Failed', conditions: [ready('False', 'ConfigInvalid')] }), 'https://github.com');
  assert.deepEqual(failed.lastError, { reason: 'ConfigInvalid', message: 'ConfigInvalid message' });
  const deploying = environmentView(
    environment({ phase: 'Deploying', conditions: [ready('False', 'WaitingForResources')] }),
    'https://github.com',
  );
  assert.equal(deploying.lastError, undefined);
  const transient = [
    ready('True', 'Ready'),
    { type: 'Reconciled', status: 'False', reason: 'TransientError', message: 'etcd', lastTransitionTime: 'x' },
  ];
  assert.deepEqual(environmentView(environment({ conditions: transient }), 'https://github.com').lastError, {
    reason: 'TransientError',
    message: 'etcd',
  });
  const stalled = [{ type: 'Stalled', status: 'True', reason: 'RenderFailed', message: 'boom' }];
  assert.deepEqual(lastError('Deploying', stalled), { reason: 'RenderFailed', message: 'boom' });
});

test('an object written by hand, with fields missing or of the wrong type, still has a view', () => {
  const view = environmentView(
    {
      metadata: { name: 'odd' },
      spec: { pullRequest: { number: 'x' } },
      status: { conditions: [null, { type: 3 }, { type: 'Ready' }], resources: 'no' },
    },
    'https://github.com',
  );
  assert.equal(view.phase, 'Pending');
  assert.equal(view.pullRequest, undefined);
  assert.equal(view.pullRequestUrl, undefined);
  assert.deepEqual(view.conditions, [{ type: 'Ready', status: 'Unknown', reason: '', message: '' }]);
  assert.deepEqual(view.resources, []);
  assert.equal(
    environmentView({ metadata: { name: 'going', deletionTimestamp: '2026-01-02T03:04:05Z' } }, 'https://github.com').phase,
    'Terminating',
  );
});

test('per-resource readiness is kept as reported', () => {
  const resources = [
    { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', name: 'web', ready: true },
    { apiVersion: 'mycompany.com/v1', kind: 'Database', name: 'db', ready: false, message: '0/1 replicas' },
  ];
  assert.deepEqual(environmentView(environment({ resources }), 'https://github.com').resources, [
    { kind: 'Algorithm', name: 'web', ready: true },
    { kind: 'Database', name: 'db', ready: false, message: '0/1 replicas' },
  ]);
});
