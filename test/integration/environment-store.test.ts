// The store the webhook and the resync write PreviewEnvironments through. In `run` it writes
// them with the controller's finalizer, so a new environment's first reconcile renders at once
// instead of first writing its finalizer (one write and one watch round trip fewer between a
// delivery and the apply). Where no controller runs, the default store adds none: the object
// would otherwise wait for a finalizer nobody removes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { previewEnvironmentFinalizer } from '../../src/controllers/preview-environment.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { KubeClient } from '../../src/kube/client.js';
import { removeFinalizer } from '../../src/kube/finalizers.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { newIdentity, testCluster, uniqueName } from '../support/test-cluster.js';

const cluster = await testCluster();
let client: KubeClient;
const names: string[] = [];

function spec(number: number): PreviewEnvironmentSpec {
  return {
    repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://github.com/acme/shop.git' },
    pullRequest: {
      number,
      headSha: 'a'.repeat(40),
      headRef: `feature-${number}`,
      baseRef: 'main',
      author: 'alice',
      authorAssociation: 'MEMBER',
      fork: false,
    },
  } as PreviewEnvironmentSpec;
}

const get = (name: string) => client.get<KubeObject>({ ...previewEnvironmentKind, name }).catch(() => undefined);

before(async () => {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  client = new KubeClient((await newIdentity(cluster, 'environment-store')).kubeConfig);
});

after(async () => {
  for (const name of names) {
    const live = await get(name);
    if (live) await removeFinalizer(client, live, previewEnvironmentFinalizer).catch(() => {});
    await client.delete({ ...previewEnvironmentKind, name }).catch(() => {});
  }
  client.close();
});

test("with the controller's finalizer: the first write carries it, later writes keep it, and a delete waits for the controller", async () => {
  const store = new KubeEnvironmentStore(client, { finalizers: [previewEnvironmentFinalizer] });
  const name = uniqueName('pr-1-store');
  names.push(name);
  const mark = cluster.audit.mark();
  await store.upsert(name, spec(1));
  await store.upsert(name, { ...spec(1), pullRequest: { ...spec(1).pullRequest, headSha: 'b'.repeat(40) } });
  await cluster.audit.settle();
  assert.equal(
    cluster.audit.writes(mark, { resource: 'previewenvironments' }).filter((w) => w.objectRef?.name === name).length,
    2,
    'one write per upsert, nothing else',
  );
  const live = await get(name);
  assert.deepEqual(live?.metadata.finalizers, [previewEnvironmentFinalizer]);
  assert.equal((live?.spec as PreviewEnvironmentSpec).pullRequest.headSha, 'b'.repeat(40));

  assert.equal(await store.delete(name), 'deleted');
  const terminating = await get(name);
  assert.ok(terminating?.metadata.deletionTimestamp, 'still there, being deleted, until the controller has torn it down');
  await removeFinalizer(client, terminating!, previewEnvironmentFinalizer);
  assert.equal(await get(name), undefined, 'gone once the controller drops its finalizer');
});

test('without finalizers (the default): a delete removes the object at once', async () => {
  const store = new KubeEnvironmentStore(client);
  const name = uniqueName('pr-2-store');
  names.push(name);
  await store.upsert(name, spec(2));
  assert.equal((await get(name))?.metadata.finalizers, undefined);
  assert.equal(await store.delete(name), 'deleted');
  assert.equal(await get(name), undefined);
});

/** `spec(n)` as GitHub described it at `updatedAt`, at commit `c` repeated. */
function at(number: number, updatedAt: string | undefined, c: string): PreviewEnvironmentSpec {
  const base = spec(number);
  return { ...base, pullRequest: { ...base.pullRequest, headSha: c.repeat(40), ...(updatedAt ? { updatedAt } : {}) } };
}

const headOf = async (name: string) => ((await get(name))?.spec as PreviewEnvironmentSpec | undefined)?.pullRequest;

test('never back in time: the API server refuses an older update (stale, nothing written); equal and newer go through', async () => {
  const store = new KubeEnvironmentStore(client);
  const name = uniqueName('pr-3-store');
  names.push(name);
  assert.equal(await store.upsert(name, at(3, '2024-01-01T00:00:10Z', 'b')), undefined);
  const written = (await get(name))!.metadata.resourceVersion;
  assert.equal(await store.upsert(name, at(3, '2024-01-01T00:00:09Z', 'a')), 'stale');
  assert.equal((await get(name))!.metadata.resourceVersion, written, 'nothing written');
  // Compared as times, not strings: 10:00:05+10:00 is before 00:00:10Z.
  assert.equal(await store.upsert(name, at(3, '2024-01-01T10:00:05+10:00', 'a')), 'stale');
  assert.equal((await headOf(name))?.headSha, 'b'.repeat(40));
  // Equal: accepted (GitHub counts seconds; the later description of that second is written).
  assert.equal(await store.upsert(name, at(3, '2024-01-01T00:00:10Z', 'c')), undefined);
  assert.equal(await store.upsert(name, at(3, '2024-01-01T00:00:11Z', 'd')), undefined);
  const newer = await headOf(name);
  assert.deepEqual([newer?.headSha, newer?.updatedAt], ['d'.repeat(40), '2024-01-01T00:00:11Z'], 'newer: written');
  // A writer that sends none (by hand, an older operator) is not held to it; ours always sends one.
  assert.equal(await store.upsert(name, at(3, undefined, 'e')), undefined);
});

test('never back in time: a delete asked for by an older update is not made; one by the same or a newer update is', async () => {
  const store = new KubeEnvironmentStore(client);
  const name = uniqueName('pr-4-store');
  names.push(name);
  await store.upsert(name, at(4, '2024-01-01T00:00:10Z', 'b'));
  assert.equal(await store.delete(name, { updatedAt: '2024-01-01T00:00:09Z' }), 'stale');
  assert.ok(await get(name));
  assert.equal(await store.delete(name, { updatedAt: '2024-01-01T00:00:10Z' }), 'deleted');
  assert.equal(await get(name), undefined);
  assert.equal(await store.delete(name, { updatedAt: '2024-01-01T00:00:11Z' }), 'absent');
});

test("a delete asked for by another repository's pull request (a name both map to) leaves the environment be", async () => {
  const store = new KubeEnvironmentStore(client);
  const name = uniqueName('pr-5-store');
  names.push(name);
  await store.upsert(name, spec(5));
  assert.equal(await store.delete(name, { repository: { owner: 'mallory', name: 'shop' } }), 'absent');
  assert.ok(await get(name), 'still there');
  assert.equal(await store.delete(name, { repository: { owner: 'ACME', name: 'Shop' } }), 'deleted');
  assert.equal(await get(name), undefined);
});
