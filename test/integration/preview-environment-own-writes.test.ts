// The watch events of the operator's own applies wake nothing: the reconcile that applied the
// Namespace, the Algorithm and the Ingress has acted on them, so their creation coming back by the
// watches is not another reconcile of the environment (in a burst, one or two of every four). What
// someone else changes — here the Algorithm's status, as its controller writes it — still wakes it.
// In a teardown, the namespace's updates while it is being emptied wake nothing; its going does.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/kube/index.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  previewRepository,
  previewYaml,
  reconcilesSettled,
  startPreviewOperator,
  waitForEnvironment,
  waitForEnvironmentsGone,
  type PreviewOperator,
} from './preview-operator-harness.js';

let operator: PreviewOperator;
let repository: GitRepository;

before(async () => {
  // No Algorithm controller: nothing but this test changes what the operator applied. The Deploying
  // status waits a minute and a namespace being deleted is polled every 2 minutes, so no requeue
  // falls within the test.
  operator = await startPreviewOperator({ tlsIssuer: false, deployingReportDelayMs: 60_000, namespacePollMs: 120_000 });
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }), 'README.md': 'app\n' });
});
after(async () => {
  await operator?.stop();
  await repository?.cleanup();
});

describe('the watch events of its own applies', () => {
  it('wake no reconcile of the environment; the Algorithm status its controller writes does', async () => {
    const pr = 4;
    const headSha = await repository.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'src/app.txt': 'v1\n' } });
    const name = await applyEnvironment(operator, { repository, pullRequest: pr, headSha, withFinalizer: true });
    const algorithm = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: name, name: 'api' };
    const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: name, name: 'preview' };
    await waitFor('the rendering to be applied', async () => {
      const found = await Promise.all([algorithm, ingress].map((ref) => operator.admin.get(ref).catch(() => undefined)));
      return found.every(Boolean);
    });
    const applied = await reconcilesSettled(operator, name);
    assert.equal(applied, 1, `one reconcile applied the environment; its own Namespace, Algorithm and Ingress woke ${applied - 1} more`);

    // What the Algorithm controller reports once its Deployment is available.
    const live = await operator.admin.get<KubeObject>(algorithm);
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'Available',
      message: 'ready',
      observedGeneration: live.metadata.generation,
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    await operator.admin.patch(algorithm, 'merge', { status: { conditions: [ready] } }, { subresource: 'status' });
    await waitForEnvironment(operator, name, 'Ready', (e) => e.status?.phase === 'Ready', 30_000);
    const total = await reconcilesSettled(operator, name);
    assert.equal(total, 2, `the Algorithm's status woke one reconcile, which wrote Ready (${total} in all)`);
  });

  it('in a teardown, the namespace being emptied wakes nothing, and its going wakes the environment', async () => {
    const pr = 5;
    const headSha = await repository.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'src/app.txt': 'v1\n' } });
    const name = await applyEnvironment(operator, { repository, pullRequest: pr, headSha, withFinalizer: true });
    const algorithm = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: name, name: 'api' };
    await waitFor('the rendering to be applied', () => operator.admin.get(algorithm).catch(() => undefined));
    // Something of someone else's with a finalizer holds the namespace in Terminating until the test lets go.
    const held = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', namespace: name, finalizers: ['test.preview/hold'] } };
    const heldRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: name, name: 'held' };
    await operator.admin.create(held);

    await deleteEnvironment(operator, name);
    const namespace = { apiVersion: 'v1', kind: 'Namespace', name };
    await waitFor('the namespace to be going', async () => (await operator.admin.get<KubeObject>(namespace)).metadata.deletionTimestamp);
    const going = await reconcilesSettled(operator, name);
    // What the namespace controller does while it empties a namespace: update it, again and again.
    for (let i = 0; i < 3; i++) {
      await operator.admin.patch(namespace, 'merge', { metadata: { annotations: { 'test.preview/progress': String(i) } } });
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    assert.equal(await reconcilesSettled(operator, name), going, 'the namespace’s updates while it goes woke no reconcile');

    await operator.admin.patch(heldRef, 'merge', { metadata: { finalizers: null } });
    // The poll is 2 minutes away: only the namespace's DELETED event can end the teardown in time.
    await waitForEnvironmentsGone(operator, [name]);
  });
});
