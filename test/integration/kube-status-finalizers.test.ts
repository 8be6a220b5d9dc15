// Status writes only when something changed; conditions keep their transition time;
// finalizer edits survive concurrent writers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Applier,
  KubeClient,
  NotFoundError,
  addFinalizer,
  isDeleted,
  findCondition,
  hasFinalizer,
  removeFinalizer,
  setCondition,
  updateStatus,
  type Condition,
  type KubeObject,
} from '../../src/kube/index.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let me: Identity;
let client: KubeClient;
before(async () => {
  cluster = await testCluster();
  me = await newIdentity(cluster, 'kube-status');
  client = new KubeClient(me.kubeConfig);
});
after(() => client?.close());

interface Gadget extends KubeObject {
  status?: { phase?: string; url?: string; conditions?: Condition[] };
}

/** A namespaced kind `Gadget` in `group`, with the subresources given. */
function gadgetCrd(group: string, subresources: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              },
            },
          },
        },
      ],
    },
  };
}

/** Applies the Gadget CRD and waits until the client's discovery serves the kind (it trails the apply on a busy server). */
async function installGadget(group: string, subresources: Record<string, unknown>): Promise<void> {
  await new Applier(client).apply([gadgetCrd(group, subresources)]);
  const kind = { apiVersion: `${group}/v1`, kind: 'Gadget' };
  await waitFor(`the API server to serve ${group}`, async () => {
    client.discovery.invalidate(kind.apiVersion);
    return client.discovery.has(kind);
  });
}

describe('status', () => {
  it('patches the status subresource only when the status changed; conditions keep lastTransitionTime', async () => {
    const ns = uniqueName('status');
    const group = `${uniqueName('g')}.kube-test.io`;
    await createNamespace(cluster.kubeConfig, ns);
    await installGadget(group, { status: {} });
    let gadget = await client.create<Gadget>({
      apiVersion: `${group}/v1`,
      kind: 'Gadget',
      metadata: { name: 'g', namespace: ns },
      spec: { size: 1 },
    });

    const t0 = new Date('2026-01-01T00:00:00Z');
    const mark = cluster.audit.mark();
    const deploying = {
      phase: 'Deploying',
      url: 'https://g.example',
      conditions: setCondition([], { type: 'Ready', status: 'False', reason: 'Deploying', message: 'applying', observedGeneration: 1 }, t0),
    };
    let result = await updateStatus(client, gadget, deploying);
    assert.equal(result.written, true);
    gadget = result.object;
    assert.equal(gadget.status?.phase, 'Deploying');

    result = await updateStatus(client, gadget, {
      ...deploying,
      conditions: setCondition(
        gadget.status?.conditions,
        { type: 'Ready', status: 'False', reason: 'Deploying', message: 'applying', observedGeneration: 1 },
        new Date(),
      ),
    });
    assert.equal(result.written, false, 'same status: no write');

    const ready = {
      phase: 'Ready',
      conditions: setCondition(
        gadget.status?.conditions,
        { type: 'Ready', status: 'True', reason: 'Ready', message: '', observedGeneration: 1 },
        new Date('2026-01-01T00:05:00Z'),
      ),
    };
    result = await updateStatus(client, gadget, ready);
    assert.equal(result.written, true);
    gadget = result.object;
    assert.equal(gadget.status?.url, undefined, 'a member left out of the desired status is removed');
    assert.equal(findCondition(gadget.status?.conditions, 'Ready')?.lastTransitionTime, '2026-01-01T00:05:00Z');
    assert.deepEqual(gadget.spec, { size: 1 }, 'spec untouched');

    await cluster.audit.settle();
    const writes = cluster.audit.writes(mark, { user: me.username });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.objectRef?.subresource}`),
      ['patch status', 'patch status'],
    );
    await client.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `gadgets.${group}` });
  });
});

describe('isDeleted', () => {
  it('says deleted for an object gone or created again, not for a 404 of a status subresource the server does not serve', async () => {
    const ns = uniqueName('deleted');
    const group = `${uniqueName('g')}.kube-test.io`;
    await createNamespace(cluster.kubeConfig, ns);
    await installGadget(group, {});
    try {
      const ref = (name: string) => ({ apiVersion: `${group}/v1`, kind: 'Gadget', namespace: ns, name });
      const gadget = (name: string) => client.create<Gadget>({ ...ref(name), metadata: { name, namespace: ns }, spec: {} });
      const kept = await gadget('kept');
      assert.equal(await isDeleted(client, kept), false);
      // This CRD serves no status subresource: a status write is 404, and the object is there.
      await assert.rejects(client.patch(ref('kept'), 'merge', { status: { phase: 'x' } }, { subresource: 'status' }), NotFoundError);
      assert.equal(await isDeleted(client, kept), false, 'a 404 of its status is not a deletion');

      const gone = await gadget('gone');
      await client.delete(ref('gone'));
      assert.equal(await isDeleted(client, gone), true);
      const again = await gadget('gone');
      assert.equal(await isDeleted(client, gone), true, 'created again: another object');
      assert.equal(await isDeleted(client, again), false);
    } finally {
      await client.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `gadgets.${group}` });
    }
  });
});

describe('finalizers', () => {
  it('adds and removes safely under concurrent writers, and makes no write when there is nothing to do', async () => {
    const ns = uniqueName('fin');
    await createNamespace(cluster.kubeConfig, ns);
    const other = new KubeClient(cluster.kubeConfig);
    const stale = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', namespace: ns } });

    // Two writers, both starting from the same (soon stale) copy.
    const raceMark = cluster.audit.mark();
    await Promise.all([
      addFinalizer(client, stale, 'example.com/one'),
      addFinalizer(other, stale, 'example.com/two'),
      other.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'f' }, 'merge', { data: { touched: 'yes' } }),
    ]);
    let current = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'f' });
    assert.deepEqual([...current.metadata.finalizers!].sort(), ['example.com/one', 'example.com/two']);
    assert.equal((current.data as { touched?: string }).touched, 'yes', "the other writer's change survived");
    await cluster.audit.settle();
    const conflicts = cluster.audit.writes(raceMark, { namespace: ns }).filter((w) => w.responseStatus?.code === 409);
    assert.ok(conflicts.length >= 1, 'the race really happened: a stale write was rejected and retried');

    const mark = cluster.audit.mark();
    const same = await addFinalizer(client, current, 'example.com/one');
    assert.equal(same, current, 'already there: returned as is');
    await cluster.audit.settle();
    assert.deepEqual(cluster.audit.writes(mark, { user: me.username }), [], 'no write');

    // Deleting: the object stays until its finalizers are gone.
    await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'f' });
    current = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'f' });
    assert.ok(current.metadata.deletionTimestamp);
    // Both start from the same copy again: the second to write conflicts, re-reads and retries.
    await Promise.all([removeFinalizer(client, current, 'example.com/one'), removeFinalizer(other, current, 'example.com/two')]);
    await assert.rejects(client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'f' }), { name: 'NotFoundError' });
    assert.equal(await removeFinalizer(client, current, 'example.com/one'), undefined, 'gone: nothing to remove');
    assert.equal(hasFinalizer(current, 'example.com/one'), true);
    other.close();
  });
});
