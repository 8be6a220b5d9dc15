// Wait for CI: a head SHA is deployed only once its required checks succeeded on GitHub (the
// emulator, through the real checks gate); until then the deployed SHA keeps serving and the
// status and the PR say it waits. The first deployment waits too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createChecksGate } from '../../src/github/checks-gate.js';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { checksRequirement, effectivePolicy } from '../../src/policy/policy-config.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  getEnvironment,
  namespaceExists,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';

const gh = await startTestEmulator();
let operator: PreviewOperator;
let git: GitRepository;

before(async () => {
  git = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }) });
  const repository = gh.createRepository({ owner: git.owner, name: git.repo });
  const app = gh.createApp({ slug: 'preview-operator' });
  gh.installApp(app.id, [repository]);
  const policy = resolvePolicyConfig({ repositories: { [`${git.owner}/${git.repo}`]: { checks: { require: ['build'] } } } });
  const clients = createGitHubClients({
    auth: { type: 'app', appId: app.id, privateKey: app.privateKey },
    baseUrl: gh.url,
    retry: { retries: 0 },
  });
  operator = await startPreviewOperator({
    policy,
    checksGate: createChecksGate({ clients, requirement: (r) => checksRequirement(effectivePolicy(policy, r)) }),
    checksPollMs: 500,
    checksFailedPollMs: 500,
  });
});
after(async () => {
  await operator?.stop();
  await git?.cleanup();
});

function checksCondition(env: EnvironmentObject) {
  return env.status?.conditions?.find((c) => c.type === 'ChecksPassed');
}

describe('wait for CI', () => {
  it('a SHA deploys only after its required check succeeded; meanwhile the deployed SHA keeps serving', async () => {
    const repo = { owner: git.owner, name: git.repo };
    const first = await git.openPullRequest(1, { headBranch: 'feature-1', files: { 'a.txt': '1\n' } });
    const name = await applyEnvironment(operator, { repository: git, pullRequest: 1, headSha: first });

    // The first deployment waits as well: nothing reported yet means nothing is deployed.
    const waiting = await waitForEnvironment(
      operator,
      name,
      'WaitingForChecks on the first SHA',
      (e) => checksCondition(e)?.reason === 'WaitingForChecks',
    );
    assert.equal(waiting.status?.deployedSha, undefined);
    assert.match(checksCondition(waiting)!.message, /waiting for build/);
    assert.equal(await namespaceExists(operator, name), false, 'nothing is applied before the checks pass');
    assert.equal(operator.reporter.lastFor(repo, 1)?.input.state, 'waiting-for-checks');

    // GitHub failing is transient, never a pass: backoff and retries counted, still nothing applied.
    const outage = gh.faults.inject({
      route: 'checks/list-for-ref',
      repository: repo,
      times: 1000,
      fault: { kind: 'server-error', status: 502 },
    });
    gh.addCheckRun(repo, { headSha: first, name: 'build', conclusion: 'success' });
    const erring = await waitForEnvironment(operator, name, 'a gate error counted as a retry', (e) => (e.status?.retryCount ?? 0) >= 1);
    assert.equal(erring.status?.conditions?.find((c) => c.type === 'Reconciled')?.reason, 'TransientError');
    assert.equal(erring.status?.deployedSha, undefined, 'an unanswered gate is never a pass');
    assert.equal(await namespaceExists(operator, name), false);
    outage.cancel();

    const deployed = await waitForEnvironment(operator, name, 'the first SHA deployed', (e) => e.status?.deployedSha === first);
    assert.equal(checksCondition(deployed)?.status, 'True');

    // A push whose check is still running: the old SHA keeps serving, nothing is applied.
    const second = await git.pushToPullRequest(1, { 'a.txt': '2\n' });
    const build = gh.addCheckRun(repo, { headSha: second, name: 'build', status: 'in_progress' });
    const mark = operator.cluster.audit.mark();
    await applyEnvironment(operator, { repository: git, pullRequest: 1, headSha: second });
    const held = await waitForEnvironment(
      operator,
      name,
      'WaitingForChecks on the second SHA',
      (e) => e.spec.pullRequest.headSha === second && checksCondition(e)?.reason === 'WaitingForChecks',
    );
    assert.equal(held.status?.deployedSha, first, 'the previous SHA keeps serving');
    assert.ok(['Deploying', 'Ready'].includes(held.status!.phase!), `the serving phase is kept, not ${held.status?.phase}`);
    assert.equal(await namespaceExists(operator, name), true);
    const report = await operator.reporter.waitForState(repo, 1, 'waiting-for-checks');
    assert.equal(report.input.headSha, second);
    assert.equal(report.input.deployedSha, first);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a few polls
    await operator.cluster.audit.settle();
    const writes = operator.cluster.audit
      .writes(mark, { user: operator.identity.username })
      .map((w) => `${w.verb} ${w.requestURI}`)
      .filter((w) => !/\/previewenvironments\/[^/]+\/status/.test(w) && !/\/events/.test(w));
    assert.deepEqual(writes, [], 'no object of the environment is written while the checks run');
    assert.equal((await getEnvironment(operator, name))?.status?.deployedSha, first);

    build.status = 'completed';
    build.conclusion = 'success';
    await waitForEnvironment(operator, name, 'the second SHA deployed', (e) => e.status?.deployedSha === second);

    // A failed check: not deployed, reported as failed with the check's name.
    const third = await git.pushToPullRequest(1, { 'a.txt': '3\n' });
    gh.addCheckRun(repo, { headSha: third, name: 'build', conclusion: 'failure' });
    await applyEnvironment(operator, { repository: git, pullRequest: 1, headSha: third });
    const failed = await waitForEnvironment(operator, name, 'ChecksFailed', (e) => checksCondition(e)?.reason === 'ChecksFailed');
    assert.equal(failed.status?.deployedSha, second);
    assert.equal(failed.status?.phase, 'Failed');
    const failedReport = await operator.reporter.waitForState(repo, 1, 'failed');
    assert.match(failedReport.input.reasons.join('\n'), /checks failed: build/);
    assert.equal(await namespaceExists(operator, name), true, 'the previous SHA still serves');

    await deleteEnvironment(operator, name);
    await waitFor('the environment to be gone', async () => (await getEnvironment(operator, name)) === undefined, { timeoutMs: 60_000 });
  });
});
