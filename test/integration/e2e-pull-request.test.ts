// Issue 7 end to end: the real pieces assembled in one process against the shared cluster.
// Signed deliveries from the GitHub emulator go over HTTP to the operator's webhook server,
// which accepts them (202) and has its EnvironmentWriter write PreviewEnvironments; the
// PreviewEnvironment controller (with the Algorithm and Database controllers of each
// environment's namespace) builds them from the real bare git
// repository and reports through the real GitHubReporter, as an App, to the emulator; the
// resync repairs what a lost delivery left behind. Every test also fails on any request that
// broke GitHub's API description or rules (startTestEmulator).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { environmentObject, previewEnvironmentKind, type EnvironmentStore } from '../../src/intake/environment-store.js';
import { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { createLabelRemover } from '../../src/github/reporting/label-remover.js';
import { createGitHubClients, type GitHubClients } from '../../src/github/octokit-factory.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { GitHubReporter } from '../../src/github/reporting/reporter-github.js';
import { deploymentEnvironment } from '../../src/github/reporting/reporter.js';
import { resyncOnce } from '../../src/intake/resync.js';
import { NotFoundError, silentLogger, type KubeObject } from '../../src/kube/index.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { PullRequestDriver, type PullRequestChange } from '../github-emulator/pull-requests.js';
import { uniqueName } from '../support/test-cluster.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { startWebhookEndpoint, type WebhookEndpoint } from '../support/webhook-endpoint.js';
import { waitFor } from '../support/wait.js';
import {
  getEnvironment,
  namespaceExists,
  previewDomain,
  previewYaml,
  startPreviewOperator,
  startWorkloadControllers,
  previewYamlHost,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

const gh = await startTestEmulator();
const policy = resolvePolicyConfig();

let repo: PullRequestDriver;
let clients: GitHubClients;
let operator: PreviewOperator;
let endpoint: WebhookEndpoint;
let webhookUrl: string;
let approvals: ApprovalRevoker;
let writer: EnvironmentWriter;
const stopWorkloads: Array<() => Promise<void>> = [];

/**
 * The webhook's store, plus the harness operator's selector label: the shared cluster runs
 * other files' PreviewEnvironment controllers, and only this file's may act on these objects.
 */
function selectorStore(): EnvironmentStore {
  const { admin, selector } = operator;
  return {
    async upsert(name, spec) {
      const object = environmentObject(name, spec);
      object.metadata.labels = { ...object.metadata.labels, [selector.key]: selector.value };
      await admin.apply(object);
    },
    async delete(name) {
      try {
        await admin.delete({ ...previewEnvironmentKind, name });
        return 'deleted';
      } catch (err) {
        if (err instanceof NotFoundError) return 'absent';
        throw err;
      }
    },
  };
}

before(async () => {
  repo = await PullRequestDriver.create(gh, {
    owner: 'acme',
    name: uniqueName('shop'),
    initialFiles: { '.preview/preview.yaml': previewYaml(), 'README.md': 'shop\n' },
  });
  const app = gh.createApp({ slug: uniqueName('preview-operator') });
  const installationId = gh.installApp(app.id, [repo.repository]);
  clients = createGitHubClients({
    auth: { type: 'app', appId: app.id, privateKey: app.privateKey, installationId },
    baseUrl: gh.url,
    // GitHub's spacing of writes (≥ 1 s, content ≥ 3 s) would make this file last minutes;
    // the emulator still fails the test on any request sent while told to wait.
    throttle: { enabled: false },
  });
  // The harness runs the controller with a RecordingReporter; here the real one reports.
  operator = await startPreviewOperator({ reporter: new GitHubReporter({ clients }), tlsIssuer: false, resyncPeriodMs: 2000 });
  approvals = new ApprovalRevoker({ removeLabel: createLabelRemover(clients), initialDelayMs: 50 });
  endpoint = await startWebhookEndpoint({
    secret: repo.hook.secret,
    store: selectorStore(),
    approvals,
    policy,
    cloneUrl: () => repo.cloneUrl,
  });
  ({ url: webhookUrl, writer } = endpoint);
});

after(async () => {
  await endpoint?.close();
  if (operator) {
    const { items } = await operator.admin.list(previewEnvironmentKind, {
      labelSelector: `${operator.selector.key}=${operator.selector.value}`,
    });
    for (const env of items) await operator.admin.delete({ ...previewEnvironmentKind, name: env.metadata.name! }).catch(() => {});
    // The controller's finalizer tears down; wait for it before the controller stops.
    await waitFor(
      'every environment gone',
      async () =>
        (await operator.admin.list(previewEnvironmentKind, { labelSelector: `${operator.selector.key}=${operator.selector.value}` })).items
          .length === 0,
      { timeoutMs: 60_000 },
    ).catch(() => {});
  }
  for (const stop of stopWorkloads) await stop();
  await operator?.stop();
  await repo?.cleanup();
});

const nameOf = (number: number) => environmentName(repo.repository, number);
const urlOf = (number: number) => `http://${previewYamlHost(repo.repository, number, previewDomain)}`;

/** Delivers; the answer (202 accepted) comes before the write, so this waits for the writer too. */
async function deliver(change: PullRequestChange): Promise<Record<string, unknown>> {
  const res = await change.delivery.deliver(webhookUrl);
  assert.equal(res.status, 202, res.body);
  await writer.idle();
  return JSON.parse(res.body) as Record<string, unknown>;
}

/** Delivers an opening change with the namespace's workload controllers already running. */
async function deliverOpening(number: number, change: PullRequestChange): Promise<void> {
  stopWorkloads.push(await startWorkloadControllers(operator, nameOf(number)));
  const body = await deliver(change);
  assert.deepEqual([body.result, body.op], ['accepted', 'upsert'], JSON.stringify(body));
}

function readyAt(number: number, sha: string) {
  return waitForEnvironment(
    operator,
    nameOf(number),
    `Ready at ${sha.slice(0, 7)}`,
    (e) => e.status?.phase === 'Ready' && e.status?.deployedSha === sha,
    90_000,
  );
}

const comments = (number: number) => gh.comments(repo.repository, number);
const deploymentsOf = (number: number) => gh.deployments(repo.repository, { environment: deploymentEnvironment(number) });
const latestState = (d: { statuses: { state: string }[] }) => d.statuses.at(-1)?.state;

async function waitForGone(number: number): Promise<void> {
  const name = nameOf(number);
  const gone = async () => (await getEnvironment(operator, name)) === undefined && !(await namespaceExists(operator, name));
  await waitFor(`${nameOf(number)} and its namespace gone`, gone, { timeoutMs: 90_000 });
}

async function waitForDestroyedReport(number: number): Promise<void> {
  await waitFor(
    `#${number}: comment says destroyed, every Deployment inactive`,
    () => {
      const list = comments(number);
      const deployments = deploymentsOf(number);
      return (
        list.length === 1 &&
        /destroy/i.test(list[0]!.body) &&
        deployments.length > 0 &&
        deployments.every((d) => latestState(d) === 'inactive')
      );
    },
    { timeoutMs: 30_000 },
  );
}

describe('a pull request from the repository itself', () => {
  let firstSha: string;

  it('opened → Ready → one comment with the URL, a successful Deployment with environment_url, a check run on the head SHA', async () => {
    const change = await repo.open({ number: 1, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    firstSha = change.pullRequest.head.sha;
    await deliverOpening(1, change);
    const ready = await readyAt(1, firstSha);
    assert.equal(ready.status?.url, urlOf(1));

    const deployment = await waitFor(
      'a Deployment with a success status',
      () => {
        const d = deploymentsOf(1).find((x) => x.sha === firstSha);
        return d && latestState(d) === 'success' ? d : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(deployment.statuses.at(-1)!.environmentUrl, urlOf(1));
    assert.equal(deploymentsOf(1).length, 1);

    const list = await waitFor(
      'the comment with the URL',
      () => {
        const c = comments(1);
        return c.length > 0 && c[0]!.body.includes(urlOf(1)) ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(list.length, 1, 'exactly one comment');
    assert.ok(list[0]!.app, 'written by the App');

    const runs = gh.checkRuns(repo.repository, { headSha: firstSha });
    assert.ok(runs.length >= 1, 'a check run on the head SHA');
    assert.ok(
      runs.every((r) => r.status === 'completed' && r.conclusion === 'success'),
      JSON.stringify(runs.map((r) => [r.name, r.status, r.conclusion])),
    );
  });

  it('two pushes → still one comment, edited to the latest SHA; a Deployment per SHA, the older inactive', async () => {
    const commentId = comments(1)[0]!.id;
    const second = await repo.push(1, { 'app.txt': 'v2\n' });
    assert.equal((await deliver(second)).op, 'upsert');
    await readyAt(1, second.pullRequest.head.sha);
    const third = await repo.push(1, { 'app.txt': 'v3\n' });
    assert.equal((await deliver(third)).op, 'upsert');
    const latest = third.pullRequest.head.sha;
    await readyAt(1, latest);

    await waitFor(
      'the comment shows the latest SHA and the latest Deployment succeeded',
      () => {
        const c = comments(1);
        const d = deploymentsOf(1).find((x) => x.sha === latest);
        return c.length === 1 && c[0]!.body.includes(latest.slice(0, 7)) && d && latestState(d) === 'success';
      },
      { timeoutMs: 30_000 },
    );
    const [comment] = comments(1);
    assert.equal(comment!.id, commentId, 'the same comment, edited');
    assert.notEqual(comment!.updatedAt, comment!.createdAt);

    const deployments = deploymentsOf(1);
    assert.deepEqual(
      new Set(deployments.map((d) => d.sha)),
      new Set([firstSha, second.pullRequest.head.sha, latest]),
      'one Deployment per SHA',
    );
    assert.equal(deployments.length, 3);
    for (const d of deployments.filter((x) => x.sha !== latest))
      assert.equal(latestState(d), 'inactive', `Deployment of ${d.sha.slice(0, 7)}`);
  });

  it('closed and merged → environment and namespace gone, the comment says destroyed, Deployments inactive', async () => {
    assert.equal((await deliver(await repo.close(1, { merged: true }))).op, 'delete');
    await waitForGone(1);
    await waitForDestroyedReport(1);
  });

  it('closed without merging → the same', async () => {
    const change = await repo.open({ number: 2, files: { 'b.txt': 'b\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    await deliverOpening(2, change);
    await readyAt(2, change.pullRequest.head.sha);
    await waitFor('#2 reported', () => deploymentsOf(2).some((d) => latestState(d) === 'success') && comments(2).length === 1, {
      timeoutMs: 30_000,
    });
    assert.equal((await deliver(await repo.close(2))).op, 'delete');
    await waitForGone(2);
    await waitForDestroyedReport(2);
  });
});

describe('the resync', () => {
  /** One pass over this file's environments, with a client that does not retry (a 5xx fails the listing at once). */
  async function resync() {
    const { items } = await operator.admin.list<KubeObject>(previewEnvironmentKind, {
      labelSelector: `${operator.selector.key}=${operator.selector.value}`,
    });
    const resyncClients = createGitHubClients({
      auth: { type: 'token', token: gh.createToken(uniqueName('resync')) },
      baseUrl: gh.url,
      retry: { enabled: false },
    });
    return resyncOnce({
      clients: resyncClients,
      writer: new EnvironmentWriter({ store: selectorStore() }),
      environments: { list: () => items.filter((e) => e.metadata.deletionTimestamp === undefined) },
      policy: () => policy,
      cloneUrl: () => repo.cloneUrl,
      logger: silentLogger,
    });
  }

  it('the closed delivery never arrives → the resync removes the environment; a failing PR listing → nothing deleted', async () => {
    const change3 = await repo.open({ number: 3, files: { 'c.txt': 'c\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    const change4 = await repo.open({ number: 4, files: { 'd.txt': 'd\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    await deliverOpening(3, change3);
    await deliverOpening(4, change4);
    await readyAt(3, change3.pullRequest.head.sha);
    await readyAt(4, change4.pullRequest.head.sha);

    // Both closed on GitHub, no delivery. First the listing fails: nothing may be deleted.
    await repo.close(3);
    await repo.close(4);
    gh.faults.inject({ route: 'pulls/list', repository: repo.repository, times: 1, fault: { kind: 'server-error', status: 502 } });
    const failed = await resync();
    assert.deepEqual(failed.deleted, [], failed.message);
    assert.ok(
      failed.errors.some((e) => e.operation === 'list'),
      failed.message,
    );
    assert.ok(await getEnvironment(operator, nameOf(3)), 'still there after a failed listing');
    assert.ok(await getEnvironment(operator, nameOf(4)), 'still there after a failed listing');

    // The next pass lists completely and removes both.
    const repaired = await resync();
    assert.deepEqual(repaired.deleted.sort(), [nameOf(3), nameOf(4)].sort(), repaired.message);
    await waitForGone(3);
    await waitForGone(4);
    await waitForDestroyedReport(3);
    await waitForDestroyedReport(4);
  });
});

describe('a pull request from a fork', () => {
  it('without the approval label → none; labeled → environment; a new push → approval removed on GitHub, environment gone', async () => {
    const change = await repo.open({ number: 5, fork: 'outsider', files: { 'x.txt': 'mine\n' } });
    stopWorkloads.push(await startWorkloadControllers(operator, nameOf(5)));
    const unlabeled = await deliver(change);
    assert.equal(unlabeled.op, 'delete', JSON.stringify(unlabeled));
    assert.equal(await getEnvironment(operator, nameOf(5)), undefined, 'no environment for the unapproved fork');

    assert.equal((await deliver(await repo.label(5, policy.trust.approvalLabel))).op, 'upsert');
    const env = await readyAt(5, change.pullRequest.head.sha);
    assert.equal(env.spec.pullRequest.fork, true);
    await waitFor('#5 reported', () => comments(5).length === 1 && deploymentsOf(5).some((d) => latestState(d) === 'success'), {
      timeoutMs: 30_000,
    });

    const pushed = await deliver(await repo.push(5, { 'x.txt': 'mine, changed\n' }, { sender: 'outsider' }));
    assert.equal(pushed.op, 'delete', JSON.stringify(pushed));
    assert.equal(pushed.approvalRevoked, true);
    await approvals.idle();
    const labels = gh.pullRequest(repo.repository, 5).labels.map((l) => l.name);
    assert.ok(!labels.includes(policy.trust.approvalLabel), `labels on GitHub: ${labels.join(', ')}`);
    await waitForGone(5);
    await waitForDestroyedReport(5);
  });
});
