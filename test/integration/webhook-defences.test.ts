// What the webhook endpoint refuses or ignores never reaches the cluster: forged, replayed,
// oversize, malformed and unused deliveries are answered with their status and the
// operator's identity makes zero writes (audit log, read once the writer is idle). And real
// deliveries are answered in milliseconds, before their writes, which coalesce under a burst
// and end at the last delivery's state.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import type { EnvironmentWrite, EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import type { WebhookOutcome } from '../../src/intake/webhook-receiver.js';
import { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { createDelivery, signBody, webhookExample, type WebhookDelivery } from '../github-emulator/webhook-delivery.js';
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
let approvals: ApprovalRevoker;
let writer: EnvironmentWriter;
const written: EnvironmentWrite[] = [];
const outcomes: WebhookOutcome[] = [];
const created = new Set<string>();

before(async () => {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  me = await newIdentity(cluster, 'webhook-defences');
  operatorClient = new KubeClient(me.kubeConfig);
  repo = await PullRequestDriver.create(gh, { owner: 'acme', name: uniqueName('api') });
  approvals = new ApprovalRevoker({ removeLabel: async () => {} });
  // Defaults throughout (25 MB limit, one-hour dedupe window): what an operator runs with.
  endpoint = await startWebhookEndpoint({
    secret: repo.hook.secret,
    store: new KubeEnvironmentStore(operatorClient),
    approvals,
    writer: { observe: (w) => written.push(w) },
    observe: (o) => outcomes.push(o),
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

/** Sends, then returns the status and the writes the operator's identity made for it (the writer done). */
async function send(request: () => Promise<{ status: number; body: string }>) {
  const mark = cluster.audit.mark();
  const res = await request();
  await writer.idle();
  await cluster.audit.settle();
  return { status: res.status, body: res.body, writes: cluster.audit.writes(mark, { user: me.username }) };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('refused and ignored deliveries touch nothing', () => {
  let opened: WebhookDelivery;

  it('a genuine delivery writes once (the control for every zero below)', async () => {
    opened = (await repo.open({ number: 1, files: { 'a.txt': 'a\n' } })).delivery;
    created.add(environmentName(repo.repository, 1));
    const { status, writes } = await send(() => opened.deliver(webhookUrl));
    assert.equal(status, 202);
    assert.equal(writes.length, 1);
  });

  it('a replayed delivery id → 200, no effect', async () => {
    const { status, body, writes } = await send(() => opened.deliver(webhookUrl));
    assert.equal(status, 200);
    assert.equal(JSON.parse(body).result, 'duplicate');
    assert.deepEqual(writes, []);
  });

  it('a bad or missing signature → 401', async () => {
    const closed = (await repo.close(1)).delivery;
    const forged = createDelivery({ event: 'pull_request', payload: closed.payload, hook: { ...repo.hook, secret: 'guessed' } });
    for (const attempt of [
      () => forged.deliver(webhookUrl),
      () => closed.deliver(webhookUrl, { headers: { 'x-hub-signature-256': undefined } }),
      () => closed.deliver(webhookUrl, { headers: { 'x-hub-signature-256': closed.headers['x-hub-signature'] } }),
      () => opened.deliver(webhookUrl, { body: closed.body, headers: { 'x-github-delivery': 'swapped-body' } }),
    ]) {
      const { status, writes } = await send(attempt);
      assert.equal(status, 401);
      assert.deepEqual(writes, []);
    }
    assert.ok(await admin.get({ ...previewEnvironmentKind, name: environmentName(repo.repository, 1) }), 'the forged close did not delete');
  });

  it('a body over 25 MB → 413', async () => {
    const huge = JSON.stringify({ ...opened.payload, padding: 'x'.repeat(25 * 1024 * 1024) });
    const { status, writes } = await send(() =>
      opened.deliver(webhookUrl, {
        body: huge,
        headers: { 'x-hub-signature-256': signBody(repo.hook.secret, huge).sha256, 'x-github-delivery': 'oversize' },
      }),
    );
    assert.equal(status, 413);
    assert.deepEqual(writes, []);
  });

  it('malformed JSON (correctly signed) → 400', async () => {
    const broken = opened.body.slice(0, -10);
    const { status, writes } = await send(() =>
      opened.deliver(webhookUrl, {
        body: broken,
        headers: { 'x-hub-signature-256': signBody(repo.hook.secret, broken).sha256, 'x-github-delivery': 'malformed' },
      }),
    );
    assert.equal(status, 400);
    assert.deepEqual(writes, []);
  });

  it('a form-encoded delivery → 415', async () => {
    const { status, writes } = await send(() =>
      opened.deliver(webhookUrl, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-github-delivery': 'form' },
      }),
    );
    assert.equal(status, 415);
    assert.deepEqual(writes, []);
  });

  it('an event the operator does not use → 202; ping → 200', async () => {
    const push = createDelivery({ event: 'push', payload: webhookExample('push'), hook: repo.hook });
    const unused = await send(() => push.deliver(webhookUrl));
    assert.equal(unused.status, 202);
    assert.deepEqual(unused.writes, []);
    const ping = createDelivery({ event: 'ping', payload: webhookExample('ping'), hook: repo.hook });
    const pong = await send(() => ping.deliver(webhookUrl));
    assert.equal(pong.status, 200);
    assert.deepEqual(pong.writes, []);
  });
});

describe('answer times', () => {
  it("500 signed deliveries: answered in milliseconds, before their writes, which end at the last one's state", async (t) => {
    await repo.open({ number: 2, files: { 'b.txt': 'b\n' } }).then((c) => c.delivery.deliver(webhookUrl));
    await writer.idle();
    const name = environmentName(repo.repository, 2);
    created.add(name);
    const deliveries: WebhookDelivery[] = [];
    for (let i = 0; i < 500; i++) {
      const change = i % 2 === 0 ? await repo.label(2, 'needs-review') : await repo.unlabel(2, 'needs-review');
      deliveries.push(change.delivery);
    }
    outcomes.length = 0;
    written.length = 0;
    const mark = cluster.audit.mark();
    const roundTrips: number[] = [];
    for (const delivery of deliveries) {
      const started = performance.now();
      const res = await delivery.deliver(webhookUrl);
      roundTrips.push(performance.now() - started);
      assert.equal(res.status, 202);
    }
    const lastAnswered = performance.now();
    await writer.idle();
    const allWrittenMs = performance.now() - lastAnswered;
    await cluster.audit.settle();
    const writes = cluster.audit.writes(mark, { user: me.username });
    // Deliveries for one PR that arrive while its write is in flight coalesce: at most one write each, at least one.
    assert.ok(writes.length >= 1 && writes.length <= 500, `${writes.length} writes`);
    assert.equal(writes.length, written.length, 'every write the writer made is in the audit log, and nothing else');
    assert.ok(writes.every((w) => w.verb === 'patch' && w.objectRef?.name === name && w.responseStatus?.code === 200));
    t.diagnostic(`500 deliveries → ${writes.length} writes; all written ${allWrittenMs.toFixed(0)} ms after the last answer`);

    const env = await admin.get<KubeObject & { spec: { pullRequest: { labels?: string[] } } }>({ ...previewEnvironmentKind, name });
    assert.deepEqual(env.spec.pullRequest.labels ?? [], [], 'the last delivery (unlabeled) wins');

    const client = [...roundTrips].sort((a, b) => a - b);
    const inServer = outcomes.map((o) => o.durationMs).sort((a, b) => a - b);
    const fmt = (xs: number[]) =>
      `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${xs.at(-1)!.toFixed(1)} ms`;
    t.diagnostic(`round trip (client): ${fmt(client)}`);
    t.diagnostic(`in the receiver: ${fmt(inServer)}`);

    // Refusals cost no cluster round trip at all.
    const refusals: number[] = [];
    for (const delivery of deliveries.slice(0, 200)) {
      const started = performance.now();
      const res = await delivery.deliver(webhookUrl);
      refusals.push(performance.now() - started);
      assert.equal(res.status, 200);
    }
    await writer.idle();
    await cluster.audit.settle();
    assert.equal(cluster.audit.writes(mark, { user: me.username }).length, writes.length, 'duplicates wrote nothing');
    t.diagnostic(`duplicates (client): ${fmt(refusals.sort((a, b) => a - b))}`);
    // GitHub waits 10 s; these bounds leave room for a loaded test machine. That an answer
    // never waits for the cluster is proven with a held API server in webhook-write-behind.test.ts.
    assert.ok(percentile(client, 50) < 250, fmt(client));
    assert.ok(percentile(client, 99) < 2000, fmt(client));
  });
});
