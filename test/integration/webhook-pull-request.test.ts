// The webhook receiver against the real API server: signed deliveries built by the GitHub
// emulator's PR helpers (from GitHub's published examples) go over HTTP to the operator's
// express app, which accepts them (202) and has its EnvironmentWriter write PreviewEnvironments
// as a fresh identity; once the writer is idle, the audit log shows exactly which writes each
// delivery caused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PreviewEnvironmentSpec } from '../../constructs/index.js';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import type { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { KubeClient } from '../../src/kube/client.js';
import { NotFoundError } from '../../src/kube/errors.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { stderrLogger } from '../../src/kube/logger.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import type { AuditEvent } from '../cluster/audit-log.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { newIdentity, testCluster, uniqueName, type Identity } from '../support/test-cluster.js';
import { startWebhookEndpoint, type WebhookEndpoint } from '../support/webhook-endpoint.js';

const cluster = await testCluster();
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'webhook-test-admin' });
const gh = await startTestEmulator();

let me: Identity;
let operatorClient: KubeClient;
let endpoint: WebhookEndpoint;
let webhookUrl: string;
let repo: PullRequestDriver;
const removedLabels: Array<[string, string, number, string]> = [];
let approvals: ApprovalRevoker;
let writer: EnvironmentWriter;
const created = new Set<string>();

before(async () => {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  me = await newIdentity(cluster, 'webhook');
  operatorClient = new KubeClient(me.kubeConfig);
  repo = await PullRequestDriver.create(gh, { owner: 'acme', name: uniqueName('shop') });
  approvals = new ApprovalRevoker({
    removeLabel: async (...args) => {
      removedLabels.push(args);
    },
  });
  endpoint = await startWebhookEndpoint({
    secret: repo.hook.secret,
    store: new KubeEnvironmentStore(operatorClient),
    approvals,
    // The controller will fetch from the real bare repository behind the emulator.
    cloneUrl: () => repo.cloneUrl,
    logger: stderrLogger,
  });
  ({ url: webhookUrl, writer } = endpoint);
});

after(async () => {
  await endpoint?.close();
  for (const name of created) await admin.delete({ ...previewEnvironmentKind, name }).catch(() => {});
  operatorClient?.close();
  admin.close();
  await repo?.cleanup();
});

function nameOf(number: number): string {
  const name = environmentName(repo.repository, number);
  created.add(name);
  return name;
}

async function environment(number: number): Promise<(KubeObject & { spec: PreviewEnvironmentSpec }) | undefined> {
  try {
    return await admin.get<KubeObject & { spec: PreviewEnvironmentSpec }>({ ...previewEnvironmentKind, name: nameOf(number) });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

/** Delivers and returns the answer with the writes the operator's identity made for it (the writer done). */
async function deliver(change: { delivery: { deliver(url: string): Promise<{ status: number; body: string }> } }) {
  const mark = cluster.audit.mark();
  const res = await change.delivery.deliver(webhookUrl);
  await writer.idle();
  await cluster.audit.settle();
  const writes = cluster.audit.writes(mark, { user: me.username });
  return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown>, writes };
}

function describeWrites(writes: AuditEvent[]): string[] {
  return writes.map((w) => `${w.verb} ${w.objectRef?.resource}/${w.objectRef?.name} ${w.responseStatus?.code}`);
}

describe('a pull request from the repository itself', () => {
  it('opened → one server-side apply creates the PreviewEnvironment with the CRD spec', async () => {
    const change = await repo.open({
      number: 11,
      files: { 'app.txt': 'v1\n' },
      author: 'alice',
      authorAssociation: 'MEMBER',
      labels: ['backend'],
    });
    const { status, body, writes } = await deliver(change);
    assert.equal(status, 202);
    assert.deepEqual([body.result, body.op], ['accepted', 'upsert']);
    assert.equal(body.environment, nameOf(11));
    assert.deepEqual(describeWrites(writes), [`patch previewenvironments/${nameOf(11)} 201`]);
    assert.match(writes[0]!.requestURI, /fieldManager=preview-operator/);

    const env = await environment(11);
    assert.ok(env, 'the PreviewEnvironment exists');
    assert.deepEqual(env.spec, {
      repository: { owner: 'acme', name: repo.repository.name, cloneUrl: repo.cloneUrl },
      pullRequest: {
        number: 11,
        headSha: change.pullRequest.head.sha,
        headRef: 'feature-11',
        baseRef: 'main',
        author: 'alice',
        authorAssociation: 'MEMBER',
        labels: ['backend'],
        draft: false,
        fork: false,
        updatedAt: change.pullRequest.updated_at,
      },
    });
    assert.equal(env.metadata.namespace, undefined, 'cluster-scoped');
    assert.equal(env.metadata.labels?.['preview.alien6.io/pull-request'], '11');
    assert.equal(env.metadata.annotations?.['preview.alien6.io/repository'], `acme/${repo.repository.name}`);
    const managers = (env.metadata.managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
    assert.deepEqual(managers, ['preview-operator/Apply']);
  });

  it('synchronize → the same object gets the new head SHA', async () => {
    const before = await environment(11);
    const change = await repo.push(11, { 'app.txt': 'v2\n' });
    const { status, writes } = await deliver(change);
    assert.equal(status, 202);
    assert.deepEqual(describeWrites(writes), [`patch previewenvironments/${nameOf(11)} 200`]);
    const env = await environment(11);
    assert.equal(env?.spec.pullRequest.headSha, change.pullRequest.head.sha);
    assert.notEqual(env?.spec.pullRequest.headSha, before?.spec.pullRequest.headSha);
    assert.equal(env?.metadata.uid, before?.metadata.uid, 'updated in place, not recreated');
    assert.equal(env?.metadata.generation, (before?.metadata.generation ?? 0) + 1);
  });

  it('converted to draft → deleted; ready for review → back', async () => {
    const draft = await deliver(await repo.convertToDraft(11));
    assert.equal(draft.body.op, 'delete');
    assert.deepEqual(describeWrites(draft.writes), [`delete previewenvironments/${nameOf(11)} 200`]);
    assert.equal(await environment(11), undefined);
    const ready = await deliver(await repo.readyForReview(11));
    assert.equal(ready.body.op, 'upsert');
    assert.equal((await environment(11))?.spec.pullRequest.draft, false);
  });

  it('closed and merged → deleted', async () => {
    const { status, body, writes } = await deliver(await repo.close(11, { merged: true }));
    assert.equal(status, 202);
    assert.deepEqual([body.result, body.op], ['accepted', 'delete']);
    assert.match(String(body.reason), /merged/);
    assert.deepEqual(describeWrites(writes), [`delete previewenvironments/${nameOf(11)} 200`]);
    assert.equal(await environment(11), undefined);
  });

  it('closed without merging → deleted', async () => {
    await deliver(await repo.open({ number: 12, files: { 'b.txt': 'b\n' } }));
    assert.ok(await environment(12));
    const { body } = await deliver(await repo.close(12));
    assert.equal(body.op, 'delete');
    assert.match(String(body.reason), /closed/);
    assert.equal(await environment(12), undefined);
  });
});

describe('a pull request from a fork', () => {
  it('without the approval label → no PreviewEnvironment', async () => {
    const change = await repo.open({ number: 21, fork: 'outsider', files: { 'x.txt': 'mine\n' } });
    assert.equal(change.pullRequest.author_association, 'CONTRIBUTOR');
    const { status, body, writes } = await deliver(change);
    assert.equal(status, 202);
    assert.deepEqual([body.result, body.op], ['accepted', 'delete']);
    assert.match(String(body.reason), /approval/);
    // The delete carries the pull request's update: the store reads the object first (404 here), so nothing is written.
    assert.deepEqual(describeWrites(writes), [], 'made sure it does not exist');
    assert.equal(await environment(21), undefined);
  });

  it('labeled with the approval label → created, marked as a fork', async () => {
    const { body } = await deliver(await repo.label(21, 'preview-approved'));
    assert.equal(body.op, 'upsert');
    const env = await environment(21);
    assert.equal(env?.spec.pullRequest.fork, true);
    assert.equal(env?.spec.pullRequest.author, 'outsider');
    assert.deepEqual(env?.spec.pullRequest.labels, ['preview-approved']);
  });

  it('a new push from the fork → deleted, and the approval label is removed on GitHub after the answer', async () => {
    const change = await repo.push(21, { 'x.txt': 'mine, changed\n' }, { sender: 'outsider' });
    const { status, body, writes } = await deliver(change);
    assert.equal(status, 202);
    assert.equal(body.op, 'delete');
    assert.equal(body.approvalRevoked, true);
    assert.deepEqual(describeWrites(writes), [`delete previewenvironments/${nameOf(21)} 200`]);
    assert.equal(await environment(21), undefined);
    await approvals.idle();
    assert.deepEqual(removedLabels, [['acme', repo.repository.name, 21, 'preview-approved']]);
  });

  it('approved again → created at the new head SHA', async () => {
    await repo.unlabel(21, 'preview-approved');
    const { body } = await deliver(await repo.label(21, 'preview-approved'));
    assert.equal(body.op, 'upsert');
    assert.equal((await environment(21))?.spec.pullRequest.headSha, repo.pullRequest(21).head.sha);
  });

  it('two labels given at once, the other delivered first: not deployed, the approval kept, deployed with its own delivery', async () => {
    const change = await repo.open({ number: 22, fork: 'outsider', files: { 'y.txt': 'mine\n' } });
    await deliver(change);
    removedLabels.length = 0;
    const bug = await repo.label(22, 'bug');
    const approved = await repo.label(22, 'preview-approved');
    // GitHub lists both labels in each delivery; "bug"'s arrives first.
    const early = await deliver({
      ...bug,
      delivery: repo.delivery('labeled', 22, 'maintainer', { label: (bug.delivery.payload as { label: unknown }).label }),
    });
    assert.deepEqual([early.body.op, early.body.approvalRevoked], ['delete', undefined]);
    assert.match(String(early.body.reason), /not known to be given on this commit/);
    const { body } = await deliver(approved);
    assert.equal(body.op, 'upsert');
    await approvals.idle();
    assert.deepEqual(removedLabels, []);
  });

  it('approved while a draft, then ready for review at the same commit → deployed', async () => {
    await repo.open({ number: 23, fork: 'outsider', draft: true, files: { 'z.txt': 'mine\n' } });
    const labeled = await deliver(await repo.label(23, 'preview-approved'));
    assert.equal(labeled.body.op, 'delete', 'a draft gets none');
    const ready = await deliver(await repo.readyForReview(23));
    assert.equal(ready.body.op, 'upsert');
    assert.equal((await environment(23))?.spec.pullRequest.headSha, repo.pullRequest(23).head.sha);
  });

  it('another label given right after the approval keeps it: the approval is tied to the head it was given on', async () => {
    removedLabels.length = 0;
    const { body } = await deliver(await repo.label(21, 'bug'));
    assert.deepEqual([body.op, body.approvalRevoked], ['upsert', undefined]);
    await approvals.idle();
    assert.deepEqual(removedLabels, []);
  });

  it('closed, pushed to while closed (GitHub sends no push) and reopened → not deployed, the approval removed', async () => {
    removedLabels.length = 0;
    await deliver(await repo.close(21, { sender: 'outsider' }));
    await repo.push(21, { 'x.txt': 'pushed while closed\n' }, { sender: 'outsider' }); // not delivered
    const { status, body, writes } = await deliver(await repo.reopen(21, { sender: 'outsider' }));
    assert.equal(status, 202);
    assert.deepEqual([body.result, body.op, body.approvalRevoked], ['accepted', 'delete', true]);
    assert.match(String(body.reason), /approval covers an earlier commit/);
    assert.deepEqual(describeWrites(writes), []);
    assert.equal(await environment(21), undefined);
    await approvals.idle();
    assert.deepEqual(removedLabels, [['acme', repo.repository.name, 21, 'preview-approved']]);
  });
});
