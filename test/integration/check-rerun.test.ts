// "Re-run" on the operator's check run, end to end on a real cluster: an environment whose
// rendering the API server refused (an admission policy) waits a minute before it tries the same
// rendering again; once the policy is gone, a signed `check_run` `rerequested` delivery to the
// webhook receiver sets its spec.rerunRequestedAt, and the controller deploys the head commit
// again at once: Ready, where without the re-run it stays Failed.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore, requestRerun } from '../../src/intake/environment-store.js';
import { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { WebhookReceiver } from '../../src/intake/webhook-receiver.js';
import type { KubeObject } from '../../src/kube/index.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { createDelivery, webhookExample, type WebhookHook } from '../github-emulator/webhook-delivery.js';
import type { GitRepository } from '../support/git-repository.js';
import { refuseWrites } from '../support/admission-refusal.js';
import {
  applyEnvironment,
  getEnvironment,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  startWorkloadControllers,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

let operator: PreviewOperator;
let repository: GitRepository;
let stopWorkloads: (() => Promise<void>) | undefined;
const hook: WebhookHook = { secret: 'rerun-secret', id: 1, targetType: 'integration', targetId: 2 };

before(async () => {
  operator = await startPreviewOperator({ resyncPeriodMs: 1000 });
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml() });
});
after(async () => {
  await stopWorkloads?.();
  await operator?.stop();
  await repository?.cleanup();
});

/** Refuses Algorithms labelled for `environment` (the operator's ownership label), until lifted. */
function freezeAlgorithms(environment: string): Promise<() => Promise<void>> {
  return refuseWrites(operator.admin, operator.cluster.kubeConfig, {
    group: 'ai.alien6.io',
    resource: 'algorithms',
    environment,
    message: 'algorithms are frozen here',
    probe: {
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      metadata: { name: 'probe' },
      spec: { image: 'registry.example/probe:1', replicas: 1 },
    },
  });
}

it('check_run rerequested: a refused rendering is tried again at once and deploys', { timeout: 180_000 }, async () => {
  const headSha = await repository.openPullRequest(4, { headBranch: 'feature-4', files: { 'src/app.txt': 'v1\n' } });
  const name = `pr-4-${repository.repo}`;
  const thaw = await freezeAlgorithms(name);
  await applyEnvironment(operator, { repository, pullRequest: 4, headSha });
  stopWorkloads = await startWorkloadControllers(operator, name);
  const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed', 90_000);
  assert.match(JSON.stringify(failed.status?.conditions), /algorithms are frozen here/);

  // The policy goes; the same rendering is not tried again before a minute (resyncs every second).
  await thaw();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  assert.equal((await getEnvironment(operator, name))?.status?.phase, 'Failed');

  // The receiver as `run` wires it: the re-run is written with a client of its own.
  const recorded = (await getEnvironment(operator, name)) as KubeObject;
  const receiver = new WebhookReceiver({
    secret: hook.secret,
    writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(operator.admin) }),
    policy: resolvePolicyConfig(),
    approvals: new ApprovalRevoker({ removeLabel: async () => {} }),
    environments: { get: (n) => (n === name ? recorded : undefined), list: () => [recorded] },
    requestRerun: (environment, requestedAt) => requestRerun(operator.admin, environment, requestedAt),
  });
  const payload = webhookExample('check_run', 'rerequested');
  Object.assign(payload.check_run as object, { head_sha: headSha, pull_requests: [] });
  payload.repository = { ...(payload.repository as object), name: repository.repo, owner: { login: repository.owner } };
  const delivery = createDelivery({ event: 'check_run', payload, hook });
  const answer = receiver.receive({ headers: delivery.headers, body: Buffer.from(delivery.body) });
  assert.equal(answer.status, 202);
  assert.deepEqual([answer.body.result, answer.body.environment], ['accepted', name]);

  const rerun = await waitForEnvironment(operator, name, 'Ready after the re-run', (e) => e.status?.phase === 'Ready', 25_000);
  assert.ok(rerun.spec.rerunRequestedAt, 'spec.rerunRequestedAt set');
  assert.deepEqual([rerun.metadata.generation, rerun.status?.observedGeneration, rerun.status?.deployedSha], [2, 2, headSha]);
});
