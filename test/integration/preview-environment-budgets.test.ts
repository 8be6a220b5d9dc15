// Budgets: an environment expires a TTL after its last deployment (its namespace is deleted,
// the object stays Expired until a push, and the reporter says why), and a repository's
// environments beyond its cap wait as Queued in pull-request order, starting when a slot
// frees. Time is moved by an injected clock, not waited for.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { systemClock, type Clock, type KubeObject } from '../../src/kube/index.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  getEnvironment,
  namespaceExists,
  previewRepository,
  previewYaml,
  reconcilesSettled,
  startPreviewOperator,
  waitForEnvironment,
  waitForEnvironmentsGone,
  type PreviewOperator,
} from './preview-operator-harness.js';

let operator: PreviewOperator;
let expiring: GitRepository;
let capped: GitRepository;
let cappedExpiring: GitRepository;
let offsetMs = 0;
const clock: Clock = { ...systemClock, now: () => Date.now() + offsetMs };

before(async () => {
  expiring = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }) });
  capped = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }) });
  cappedExpiring = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }) });
  const capOfOne = { budgets: { maxEnvironmentsPerRepository: 1 } };
  operator = await startPreviewOperator({
    clock,
    policy: resolvePolicyConfig({
      repositories: { [`${capped.owner}/${capped.repo}`]: capOfOne, [`${cappedExpiring.owner}/${cappedExpiring.repo}`]: capOfOne },
    }),
  });
});
after(async () => {
  await operator?.stop();
  await expiring?.cleanup();
  await capped?.cleanup();
  await cappedExpiring?.cleanup();
});

describe('budgets', () => {
  // A test that fails half-way leaves no clock moved for the next.
  afterEach(() => {
    offsetMs = 0;
  });

  it('past its TTL the namespace goes and the object stays Expired: the same spec again does nothing, a push redeploys', async () => {
    const headSha = await expiring.openPullRequest(1, { headBranch: 'feature-1', files: { 'a.txt': '1\n' } });
    const name = await applyEnvironment(operator, { repository: expiring, pullRequest: 1, headSha, ttl: '1h' });
    const deployed = await waitForEnvironment(operator, name, 'deployed', (e) => e.status?.deployedSha === headSha);
    const { lastDeployedAt, expiresAt } = deployed.status!;
    assert.equal(new Date(expiresAt!).getTime() - new Date(lastDeployedAt!).getTime(), 3600_000, 'expiresAt = last deployment + spec.ttl');

    offsetMs = 3600_000 + 60_000;
    operator.controller.enqueue(name);
    const expired = await waitForEnvironment(
      operator,
      name,
      'Expired',
      (e) => e.status?.phase === 'Expired' && e.status.expiredSha === headSha,
    );
    assert.equal(expired.metadata.deletionTimestamp, undefined, 'the object stays, so the open PR does not recreate it');
    await waitFor('the namespace to be gone', async () => !(await namespaceExists(operator, name)), { timeoutMs: 60_000 });
    const repo = { owner: expiring.owner, name: expiring.repo };
    const last = operator.reporter.lastFor(repo, 1)!;
    assert.equal(last.input.state, 'expired');
    assert.match(last.input.reasons.join('\n'), /no new commit was deployed within its time to live of 1h/);
    assert.ok(!operator.reporter.statesFor(repo, 1).includes('destroyed'), 'an expiry is reported as such, not as a plain deletion');

    // What a resync or a repeated webhook does: apply the same spec, and look again.
    const { cluster, identity } = operator;
    const mark = cluster.audit.mark();
    await applyEnvironment(operator, { repository: expiring, pullRequest: 1, headSha, ttl: '1h' });
    operator.controller.enqueue(name);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await cluster.audit.settle();
    assert.deepEqual(
      cluster.audit.writes(mark, { user: identity.username }).map((w) => `${w.verb} ${w.requestURI}`),
      [],
      'an expired environment at its expired SHA makes no write',
    );
    assert.equal(await namespaceExists(operator, name), false);
    assert.equal((await getEnvironment(operator, name))?.status?.phase, 'Expired');

    const pushed = await expiring.pushToPullRequest(1, { 'a.txt': '2\n' });
    await applyEnvironment(operator, { repository: expiring, pullRequest: 1, headSha: pushed, ttl: '1h' });
    const redeployed = await waitForEnvironment(
      operator,
      name,
      'redeployed at the new SHA',
      (e) => e.status?.deployedSha === pushed && e.status.phase !== 'Expired',
    );
    assert.ok(new Date(redeployed.status!.expiresAt!).getTime() > clock.now(), 'a fresh TTL');
    assert.equal(await namespaceExists(operator, name), true);

    await deleteEnvironment(operator, name);
    await waitForEnvironmentsGone(operator, [name]);
  });

  it('beyond the per-repository cap environments wait as Queued, in PR-number order, and start when a slot frees', async () => {
    const repo = { owner: capped.owner, name: capped.repo };
    const open = async (pr: number) => {
      const headSha = await capped.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'a.txt': `${pr}\n` } });
      return applyEnvironment(operator, { repository: capped, pullRequest: pr, headSha });
    };
    const first = await open(1);
    await waitForEnvironment(operator, first, 'deploying', (e) => e.status?.deployedSha !== undefined);
    const third = await open(3);
    await waitForEnvironment(operator, third, 'Queued', (e) => e.status?.phase === 'Queued');
    const second = await open(2);
    await waitForEnvironment(
      operator,
      second,
      'Queued first',
      (e) => e.status?.phase === 'Queued' && /position 1 in the queue/.test(readyMessage(e)),
    );
    await waitForEnvironment(operator, third, 'Queued second', (e) => /position 2 in the queue/.test(readyMessage(e)));
    assert.equal(await namespaceExists(operator, second), false, 'a queued environment has no namespace');
    const queued = await operator.reporter.waitForState(repo, 2, 'queued');
    assert.match(queued.input.reasons.join('\n'), /may run 1 environment at once; position 1 in the queue/);

    await deleteEnvironment(operator, first);
    const started = await waitForEnvironment(
      operator,
      second,
      'started after the first was deleted',
      (e) => e.status?.deployedSha !== undefined,
      60_000,
    );
    assert.equal(await getEnvironment(operator, first), undefined, 'the slot freed only once the first environment was gone');
    assert.equal(started.status?.namespace, second);
    await waitForEnvironment(
      operator,
      third,
      'still Queued, now first in line',
      (e) => e.status?.phase === 'Queued' && /position 1 in the queue/.test(readyMessage(e)),
    );
    assert.deepEqual(operator.reporter.statesFor(repo, 2).slice(0, 2), ['queued', 'deploying']);

    await deleteEnvironment(operator, second);
    await deleteEnvironment(operator, third);
    await waitForEnvironmentsGone(operator, [second, third]);
  });

  it('a Queued environment starts once the one holding the slot has expired and its namespace is gone', async () => {
    const open = async (pr: number, ttl: string) => {
      const headSha = await cappedExpiring.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'a.txt': `${pr}\n` } });
      return applyEnvironment(operator, { repository: cappedExpiring, pullRequest: pr, headSha, ttl });
    };
    const first = await open(1, '1h');
    await waitForEnvironment(operator, first, 'deploying', (e) => e.status?.deployedSha !== undefined);
    // Something of someone else's with a finalizer holds the namespace in Terminating until the test lets go.
    const held = { apiVersion: 'v1', kind: 'ConfigMap', namespace: first, name: 'held' };
    await operator.admin.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'held', namespace: first, finalizers: ['test.preview/hold'] },
    });
    // Its TTL counts from its creation while it waits: long enough to outlive the clock's jump.
    const second = await open(2, '48h');
    await waitForEnvironment(operator, second, 'Queued', (e) => e.status?.phase === 'Queued');

    offsetMs = 3600_000 + 60_000;
    operator.controller.enqueue(first);
    await waitForEnvironment(operator, first, 'Expired', (e) => e.status?.phase === 'Expired');
    await waitFor(
      'the namespace to be going',
      async () => (await operator.admin.get<KubeObject>(namespaceRef(first))).metadata.deletionTimestamp,
    );
    await reconcilesSettled(operator, second);
    assert.equal(
      (await getEnvironment(operator, second))?.status?.phase,
      'Queued',
      'the expired environment’s namespace still holds the slot',
    );

    await operator.admin.patch(held, 'merge', { metadata: { finalizers: null } });
    // Nothing but the namespace's going may wake it: the controller's resync is 10 minutes away.
    const started = await waitForEnvironment(
      operator,
      second,
      'started once the first one’s namespace was gone',
      (e) => e.status?.deployedSha !== undefined,
      90_000,
    );
    assert.equal(started.status?.namespace, second);
    assert.equal(await namespaceExists(operator, first), false);
    assert.equal((await getEnvironment(operator, first))?.status?.phase, 'Expired', 'the expired environment stays');

    await deleteEnvironment(operator, first);
    await deleteEnvironment(operator, second);
    await waitForEnvironmentsGone(operator, [first, second]);
  });
});

function namespaceRef(name: string) {
  return { apiVersion: 'v1', kind: 'Namespace', name };
}

function readyMessage(env: { status?: { conditions?: { type: string; message: string }[] } }): string {
  return env.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '';
}
