// Webhook intake answers before the cluster write, against the real API server reached
// through a gate (api-server-gate.ts) that can hold or refuse the operator's connections while
// the shared control plane keeps serving everyone else: a delivery is answered 202 while its
// write is held, and the PreviewEnvironment appears with the spec once the gate opens; deliveries
// for one PR in quick succession end at the newest spec and never go back to an older one (a
// watch sees every version); a refused write is retried until the API server answers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import type { EnvironmentWrite, EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { KubeClient } from '../../src/kube/client.js';
import { NotFoundError } from '../../src/kube/errors.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { PullRequestDriver, type PullRequestChange } from '../github-emulator/pull-requests.js';
import { newIdentity, testCluster, uniqueName, type Identity } from '../support/test-cluster.js';
import { startWebhookEndpoint, type WebhookEndpoint } from '../support/webhook-endpoint.js';
import { waitFor } from '../support/wait.js';
import { ApiServerGate } from '../support/api-server-gate.js';

type Environment = KubeObject & { spec: { pullRequest: { number: number; headSha: string; labels?: string[] } } };

const cluster = await testCluster();
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'write-behind-test-admin' });
const gh = await startTestEmulator();

let me: Identity;
let gate: ApiServerGate;
let operatorClient: KubeClient;
let writer: EnvironmentWriter;
let endpoint: WebhookEndpoint;
let webhookUrl: string;
let repo: PullRequestDriver;
const written: EnvironmentWrite[] = [];
const created = new Set<string>();

before(async () => {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  me = await newIdentity(cluster, 'write-behind');
  gate = await ApiServerGate.start(cluster.server);
  operatorClient = new KubeClient(gate.kubeConfigFor(me.kubeConfig));
  repo = await PullRequestDriver.create(gh, { owner: 'acme', name: uniqueName('intake') });
  endpoint = await startWebhookEndpoint({
    secret: repo.hook.secret,
    store: new KubeEnvironmentStore(operatorClient),
    approvals: new ApprovalRevoker({ removeLabel: async () => {} }),
    // Short backoff so that the retry test takes a second, not half a minute.
    writer: { initialDelayMs: 50, maxDelayMs: 400, observe: (w) => written.push(w) },
  });
  ({ url: webhookUrl, writer } = endpoint);
});

after(async () => {
  gate?.set('open');
  await endpoint?.close();
  for (const name of created) await admin.delete({ ...previewEnvironmentKind, name }).catch(() => {});
  operatorClient?.close();
  await gate?.close();
  admin.close();
  await repo?.cleanup();
});

function nameOf(number: number): string {
  const name = environmentName(repo.repository, number);
  created.add(name);
  return name;
}

/** The PreviewEnvironment as the API server has it (read directly, not through the gate). */
async function environment(number: number): Promise<Environment | undefined> {
  try {
    return await admin.get<Environment>({ ...previewEnvironmentKind, name: nameOf(number) });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

async function deliver(change: PullRequestChange): Promise<Record<string, unknown>> {
  const res = await change.delivery.deliver(webhookUrl);
  assert.equal(res.status, 202, res.body);
  return JSON.parse(res.body) as Record<string, unknown>;
}

async function writesSince(mark: number): Promise<string[]> {
  await cluster.audit.settle();
  return cluster.audit.writes(mark, { user: me.username }).map((w) => `${w.verb} ${w.objectRef?.name} ${w.responseStatus?.code}`);
}

/** Every head SHA the API server stored for the environment, in order (a watch from its creation). */
async function watchHeadShas(number: number): Promise<{ seen: string[]; stop: () => Promise<void> }> {
  const informer = new Informer<Environment>(admin, previewEnvironmentKind, {
    fieldSelector: `metadata.name=${nameOf(number)}`,
    logger: silentLogger,
  });
  const seen: string[] = [];
  const record = (env: Environment) => {
    if (seen.at(-1) !== env.spec.pullRequest.headSha) seen.push(env.spec.pullRequest.headSha);
  };
  informer.addHandler({ onAdd: record, onUpdate: (_old, env) => record(env) });
  informer.start();
  await informer.waitForSync();
  return { seen, stop: () => informer.stop() };
}

describe('the answer does not wait for the cluster', () => {
  // The timeout: an answer that waited for the held write would never come.
  it(
    'a delivery is answered 202 while its write is held; the PreviewEnvironment then exists with the spec',
    { timeout: 30_000 },
    async () => {
      gate.set('hold');
      written.length = 0;
      const mark = cluster.audit.mark();
      const change = await repo.open({ number: 1, files: { 'a.txt': 'a\n' }, author: 'alice', authorAssociation: 'MEMBER' });
      // Answered while the write is held at the gate: the answer does not wait for it.
      const body = await deliver(change);
      assert.deepEqual([body.result, body.op, body.environment], ['accepted', 'upsert', nameOf(1)]);

      assert.equal(writer.pending, 1, 'the write is under way, held at the gate');
      assert.equal(await environment(1), undefined, 'answered before the write landed');
      assert.deepEqual(await writesSince(mark), []);

      const heldMs = 300;
      await new Promise((r) => setTimeout(r, heldMs));
      gate.set('open');
      await writer.idle();
      const env = await environment(1);
      assert.ok(env, 'written once the API server got the request');
      assert.equal(env.spec.pullRequest.headSha, change.pullRequest.head.sha);
      assert.equal(env.spec.pullRequest.number, 1);
      assert.ok(env.metadata.annotations?.['preview.alien6.io/delivered-at'], 'stamped with the delivery time');
      assert.deepEqual(await writesSince(mark), [`patch ${nameOf(1)} 201`]);
      assert.deepEqual(
        written.map((w) => [w.environment, w.result, w.attempts]),
        [[nameOf(1), 'upserted', 1]],
      );
      assert.ok(written[0]!.durationMs >= heldMs, `submit → written ${written[0]!.durationMs} ms includes the hold`);
    },
  );
});

describe('ordering', () => {
  it('deliveries for one PR in quick succession end with the newest spec, never an older one after it', async () => {
    await deliver(await repo.open({ number: 2, files: { 'b.txt': 'b0\n' }, author: 'alice', authorAssociation: 'MEMBER' }));
    await writer.idle();
    const watch = await watchHeadShas(2);
    try {
      // Held: the first push's write is in flight, the second waits behind it, the third replaces the second.
      gate.set('hold');
      const mark = cluster.audit.mark();
      const first = await repo.push(2, { 'b.txt': 'b1\n' });
      const second = await repo.push(2, { 'b.txt': 'b2\n' });
      const third = await repo.push(2, { 'b.txt': 'b3\n' });
      for (const change of [first, second, third]) assert.equal((await deliver(change)).op, 'upsert');
      assert.equal(writer.pending, 2, 'one write in flight, one waiting (the newest)');
      gate.set('open');
      await writer.idle();
      assert.deepEqual(await writesSince(mark), [`patch ${nameOf(2)} 200`, `patch ${nameOf(2)} 200`], 'the second push was never written');
      const [sha0, sha1, sha3] = [watch.seen[0]!, first.pullRequest.head.sha, third.pullRequest.head.sha];
      await waitFor('the watch to see the last write', () => watch.seen.at(-1) === sha3, { timeoutMs: 10_000 });
      assert.deepEqual(watch.seen, [sha0, sha1, sha3]);

      // Open, as fast as the deliveries come: whatever coalesces, the last one wins and nothing goes back.
      const burst: PullRequestChange[] = [];
      for (let i = 4; i <= 9; i++) burst.push(await repo.push(2, { 'b.txt': `b${i}\n` }));
      for (const change of burst) await deliver(change);
      await writer.idle();
      const newest = burst.at(-1)!.pullRequest.head.sha;
      assert.equal((await environment(2))?.spec.pullRequest.headSha, newest);
      await waitFor('the watch to see the newest', () => watch.seen.at(-1) === newest, { timeoutMs: 10_000 });
      const order = burst.map((c) => c.pullRequest.head.sha);
      const afterHeld = watch.seen.slice(3).map((sha) => order.indexOf(sha));
      assert.ok(
        afterHeld.every((i, k) => i >= 0 && (k === 0 || i > afterHeld[k - 1]!)),
        `versions in delivery order: ${afterHeld.join(', ')}`,
      );
    } finally {
      await watch.stop();
    }
  });
});

describe('an unavailable API server', () => {
  it('a refused write is retried after the answer, and the environment appears once the API server answers', async () => {
    gate.set('refuse');
    written.length = 0;
    const refusedBefore = gate.refused;
    const mark = cluster.audit.mark();
    const change = await repo.open({ number: 3, files: { 'c.txt': 'c\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    const body = await deliver(change);
    assert.deepEqual([body.result, body.op], ['accepted', 'upsert'], 'no 503: the writer owns the retry');
    await waitFor('three refused attempts', () => gate.refused - refusedBefore >= 3, { timeoutMs: 10_000, intervalMs: 20 });
    assert.equal(writer.pending, 1, 'still owed');
    assert.equal(written.length, 0, 'not reported as failed: a transient failure is retried');
    assert.equal(await environment(3), undefined);

    gate.set('open');
    await writer.idle();
    assert.equal((await environment(3))?.spec.pullRequest.headSha, change.pullRequest.head.sha);
    assert.equal(written.length, 1);
    assert.equal(written[0]!.result, 'upserted');
    assert.ok(written[0]!.attempts >= 3, `${written[0]!.attempts} attempts`);
    assert.deepEqual(
      await writesSince(mark),
      [`patch ${nameOf(3)} 201`],
      'the refused attempts never reached the API server; one write did',
    );
  });
});
