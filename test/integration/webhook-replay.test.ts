// No going back in time, tried as an attacker would: a signed `pull_request` delivery captured
// earlier is re-sent byte for byte (same body, same X-Hub-Signature-256) under a fresh
// X-GitHub-Delivery id, which the signature does not cover, so deduplication by id cannot stop
// it. It must not move the PreviewEnvironment back to the older commit, nor delete it after a
// newer reopen — not through the receiver that saw the newer delivery, not through one that did
// not (a restarted process, another replica: the API server's rule refuses the write), and not
// through the resync reading an older listing. Real HTTP, real API server, real signatures.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { EnvironmentWriter, type EnvironmentWrite } from '../../src/intake/environment-writer.js';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { resyncOnce } from '../../src/intake/resync.js';
import { KubeClient } from '../../src/kube/client.js';
import { NotFoundError } from '../../src/kube/errors.js';
import type { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { PullRequestDriver, type PullRequestChange } from '../github-emulator/pull-requests.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { watchEnvironments, type EnvironmentWatch } from '../support/environment-watch.js';
import { testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';
import { startWebhookEndpoint, type WebhookEndpoint } from '../support/webhook-endpoint.js';

type Environment = KubeObject & { spec: { repository: { owner: string }; pullRequest: { headSha: string; updatedAt?: string } } };

const cluster = await testCluster();
const gh = await startTestEmulator();
const owner = uniqueName('replay');

let watch: EnvironmentWatch<Environment>;
let operatorClient: KubeClient;
let informer: Informer<Environment>;
let repo: PullRequestDriver;
const endpoints: WebhookEndpoint[] = [];
const writes: EnvironmentWrite[] = [];

before(async () => {
  watch = await watchEnvironments<Environment>(cluster, 'replay');
  ({ client: operatorClient, informer } = watch);
  repo = await PullRequestDriver.create(gh, { owner, name: 'shop' });
});

after(async () => {
  for (const endpoint of endpoints) await endpoint.close();
  const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'replay-test-admin' });
  await watch?.stop(owner, admin);
  admin.close();
  await repo?.cleanup();
});

/** A receiver with its own memory, as a freshly started process or another replica has. */
async function receiver(options: { cache?: boolean } = {}): Promise<WebhookEndpoint> {
  const endpoint = await startWebhookEndpoint({
    secret: repo.hook.secret,
    store: new KubeEnvironmentStore(operatorClient),
    approvals: new ApprovalRevoker({ removeLabel: async () => {} }),
    cloneUrl: () => repo.cloneUrl,
    writer: { observe: (w) => writes.push(w) },
    ...(options.cache ? { environments: informer } : {}),
  });
  endpoints.push(endpoint);
  return endpoint;
}

async function send(endpoint: WebhookEndpoint, change: PullRequestChange, deliveryId?: string) {
  const res = await change.delivery.deliver(endpoint.url, deliveryId ? { headers: { 'x-github-delivery': deliveryId } } : {});
  await endpoint.writer.idle();
  return { status: res.status, body: JSON.parse(res.body) as Record<string, unknown> };
}

/** The captured delivery, re-sent as is under a delivery id GitHub never used. */
const replay = (endpoint: WebhookEndpoint, change: PullRequestChange) => send(endpoint, change, randomUUID());

/** GitHub's `updated_at` counts whole seconds: the next change of the pull request gets a later one. */
async function nextSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
}

async function recorded(number: number): Promise<Environment | undefined> {
  try {
    return await operatorClient.get<Environment>({ ...previewEnvironmentKind, name: environmentName(repo.repository, number) });
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

describe('a replayed older delivery', () => {
  it('an older push re-sent under a new delivery id is answered 200 stale, and the environment keeps the newer commit', async () => {
    const endpoint = await receiver();
    const opened = await repo.open({ number: 1, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    assert.equal((await send(endpoint, opened)).status, 202);
    await nextSecond();
    const pushed = await repo.push(1, { 'app.txt': 'v2\n' });
    assert.equal((await send(endpoint, pushed)).status, 202);
    const before = await recorded(1);
    assert.equal(before?.spec.pullRequest.headSha, pushed.pullRequest.head.sha);
    assert.equal(before?.spec.pullRequest.updatedAt, pushed.pullRequest.updated_at);

    const answer = await replay(endpoint, opened);
    assert.equal(answer.status, 200, 'a 2xx, so GitHub does not retry it');
    assert.equal(answer.body.result, 'stale', JSON.stringify(answer.body));
    const after = await recorded(1);
    assert.equal(after?.spec.pullRequest.headSha, pushed.pullRequest.head.sha, 'still the newer commit');
    assert.equal(after?.metadata.resourceVersion, before?.metadata.resourceVersion, 'nothing was written');
  });

  it("a receiver that never saw the newer push answers stale from the cluster's record (informer)", async () => {
    const opened = await repo.open({ number: 2, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    await send(await receiver(), opened);
    await nextSecond();
    const pushed = await repo.push(2, { 'app.txt': 'v2\n' });
    await send(await receiver(), pushed);
    const name = environmentName(repo.repository, 2);
    await waitFor('the informer sees the push', () => informer.get(name)?.spec.pullRequest.headSha === pushed.pullRequest.head.sha);

    const answer = await replay(await receiver({ cache: true }), opened);
    assert.deepEqual([answer.status, answer.body.result], [200, 'stale']);
    assert.equal((await recorded(2))?.spec.pullRequest.headSha, pushed.pullRequest.head.sha);
  });

  it('a receiver that knows nothing accepts it, but the API server refuses the older write: the newer commit stays', async () => {
    const opened = await repo.open({ number: 3, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    await send(await receiver(), opened);
    await nextSecond();
    const pushed = await repo.push(3, { 'app.txt': 'v2\n' });
    await send(await receiver(), pushed);
    const before = await recorded(3);

    writes.length = 0;
    const answer = await replay(await receiver(), opened);
    assert.deepEqual([answer.status, answer.body.result], [202, 'accepted'], 'it cannot know before the write');
    assert.deepEqual(
      writes.map((w) => [w.op, w.result]),
      [['upsert', 'stale']],
      "refused by the CRD's rule, and not a failure",
    );
    const after = await recorded(3);
    assert.equal(after?.spec.pullRequest.headSha, pushed.pullRequest.head.sha);
    assert.equal(after?.metadata.resourceVersion, before?.metadata.resourceVersion);
  });

  it('a closed re-sent after a newer reopened does not delete the environment, neither answered nor written', async () => {
    const endpoint = await receiver();
    await send(endpoint, await repo.open({ number: 4, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' }));
    await nextSecond();
    const closed = await repo.close(4);
    assert.equal((await send(endpoint, closed)).body.op, 'delete');
    assert.equal(await recorded(4), undefined);
    await nextSecond();
    assert.equal((await send(endpoint, await repo.reopen(4))).body.op, 'upsert');
    assert.ok(await recorded(4));

    assert.equal((await replay(endpoint, closed)).body.result, 'stale');
    writes.length = 0;
    assert.equal((await replay(await receiver(), closed)).body.op, 'delete', 'a receiver that knows nothing queues the delete…');
    assert.deepEqual(
      writes.map((w) => [w.op, w.result]),
      [['delete', 'stale']],
      '…which the store does not make',
    );
    assert.ok(await recorded(4), 'the reopened pull request keeps its environment');
  });
});

describe('an older listing in the resync', () => {
  it('does not roll the environment back to the commit it lists', async () => {
    const endpoint = await receiver();
    const listed = await PullRequestDriver.create(gh, { owner, name: 'listed', webhookSecret: repo.hook.secret });
    after(() => listed.cleanup());
    const opened = await listed.open({ number: 5, files: { 'app.txt': 'v1\n' }, author: 'alice', authorAssociation: 'MEMBER' });
    await send(endpoint, opened);
    await nextSecond();
    const pushed = await listed.push(5, { 'app.txt': 'v2\n' });
    await send(endpoint, pushed);
    const name = environmentName(listed.repository, 5);
    await waitFor('the informer sees the push', () => informer.get(name)?.spec.pullRequest.headSha === pushed.pullRequest.head.sha);

    // GitHub's answer as it was before the push (a listing served from a stale cache or replica).
    gh.pullRequest(listed.repository, 5).head.sha = opened.pullRequest.head.sha;
    gh.pullRequest(listed.repository, 5).updatedAt = opened.pullRequest.updated_at;
    const summary = await resyncOnce({
      clients: createGitHubClients({ auth: { type: 'token', token: gh.createToken(uniqueName('operator')) }, baseUrl: gh.url }),
      writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) }),
      environments: { list: () => informer.list().filter((e) => e.metadata.name === name), get: (n) => informer.get(n) },
      policy: () => resolvePolicyConfig({ repositories: { [`${owner}/listed`]: {} } }),
      logger: silentLogger,
    });
    assert.equal(summary.stale, 1, summary.message);
    assert.deepEqual(summary.updated, []);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(informer.get(name)?.spec.pullRequest.headSha, pushed.pullRequest.head.sha);
  });
});
