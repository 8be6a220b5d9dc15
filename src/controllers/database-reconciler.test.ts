// The Database reconciler without a cluster: fake informers and an in-memory API server
// (test/support/fake-cluster.ts). test/integration/database-lifecycle.test.ts keeps what needs
// the real API server (volume claims, the garbage collector, the engines' images).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, databaseLabel, type DatabaseSpec, type DatabaseStatus } from '../../constructs/index.js';
import type { KubeObject, ObjectRef } from '../kube/index.js';
import { FakeCluster, fail } from '../../test/support/fake-cluster.js';
import { DatabaseReconciler } from './database-reconciler.js';

const ns = 'shop';

function setup() {
  const cluster = new FakeCluster(() => new Date('2026-03-01T10:00:00Z'));
  const owned = { labelSelector: databaseLabel };
  const informers = {
    databases: cluster.informer(databaseKind),
    statefulSets: cluster.informer({ apiVersion: 'apps/v1', kind: 'StatefulSet' }, owned),
    services: cluster.informer({ apiVersion: 'v1', kind: 'Service' }, owned),
    secrets: cluster.informer({ apiVersion: 'v1', kind: 'Secret' }, owned),
    configMaps: cluster.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, owned),
  };
  const reconciler = new DatabaseReconciler(cluster.client(), informers, { now: () => new Date('2026-03-01T10:00:00Z') });
  const admin = cluster.client('test-admin');
  const ref = (kind: string, name: string): ObjectRef => ({
    apiVersion: kind === 'Database' ? databaseKind.apiVersion : kind === 'StatefulSet' ? 'apps/v1' : 'v1',
    kind,
    namespace: ns,
    name,
  });
  return {
    cluster,
    admin,
    informers,
    ref,
    reconcile: (name: string) => reconciler.reconcile(`${ns}/${name}`, { signal: new AbortController().signal, retries: 0 }),
    create: (name: string, spec: DatabaseSpec) => admin.create({ ...databaseKind, metadata: { name, namespace: ns }, spec }),
    edit: (name: string, spec: Partial<DatabaseSpec>) => admin.patch(ref('Database', name), 'merge', { spec }),
    status: (name: string) => cluster.get(ref('Database', name))?.status as DatabaseStatus | undefined,
    statefulSet: (name: string) => cluster.get(ref('StatefulSet', name)),
  };
}

const condition = (status: DatabaseStatus | undefined, type: string) => status?.conditions?.find((c) => c.type === type);
const password = (secret: KubeObject | undefined) => Buffer.from((secret?.data as { password: string }).password, 'base64').toString();
type ClaimTemplate = { spec: { resources: { requests: { storage: string } } } };
const claimSize = (set: KubeObject | undefined) =>
  (set?.spec as { volumeClaimTemplates: ClaimTemplate[] }).volumeClaimTemplates[0]?.spec.resources.requests.storage;

describe('the Database reconciler', () => {
  it('creates the credentials once, the StatefulSet and its Services; Ready once rolled out; unchanged, it writes nothing', async () => {
    const t = setup();
    await t.create('orders', { engine: 'postgresql', version: '16', storage: '1Gi', replicas: 1 });
    assert.equal(await t.reconcile('orders'), undefined);
    const secret = t.cluster.get(t.ref('Secret', 'orders-credentials'));
    assert.equal(password(secret).length, 40);
    assert.deepEqual(t.cluster.events(), ['Normal CredentialsCreated: created Secret orders-credentials with a new random password']);
    assert.equal(t.statefulSet('orders')?.metadata.ownerReferences?.[0]?.kind, 'Database');
    assert.equal(t.status('orders')?.phase, 'Provisioning');
    t.cluster.rollOut(t.ref('StatefulSet', 'orders'));
    await t.reconcile('orders');
    const ready = t.status('orders');
    assert.deepEqual(
      [ready?.phase, ready?.endpoint, ready?.secretName, condition(ready, 'Ready')?.status],
      ['Ready', 'orders.shop.svc.cluster.local', 'orders-credentials', 'True'],
    );

    const mark = t.cluster.writes.length;
    await t.reconcile('orders');
    await t.reconcile('orders');
    assert.deepEqual(t.cluster.writesSince(mark), [], 'an unchanged Database is reconciled without writes');
    assert.equal(t.cluster.writes.filter((w) => w.kind === 'Secret').length, 1, 'the credentials are created once');
    assert.equal(password(t.cluster.get(t.ref('Secret', 'orders-credentials'))), password(secret), 'and never rewritten');
  });

  it('scales by adding replicas beside the primary, Provisioning until they stream; back to one server, they go', async () => {
    const t = setup();
    await t.create('orders', { engine: 'mysql', version: '8.4', storage: '1Gi' });
    await t.reconcile('orders');
    t.cluster.rollOut(t.ref('StatefulSet', 'orders'));
    const primary = t.statefulSet('orders');
    await t.edit('orders', { replicas: 3 });
    await t.reconcile('orders');
    const replicas = (name: string) => (t.statefulSet(name)?.spec as { replicas: number } | undefined)?.replicas;
    assert.deepEqual([replicas('orders'), replicas('orders-replica')], [1, 2]);
    assert.equal(t.statefulSet('orders')?.metadata.resourceVersion, primary?.metadata.resourceVersion, 'the primary is not touched');
    assert.ok(t.cluster.get(t.ref('Service', 'orders-ro')));
    assert.deepEqual([t.status('orders')?.phase, condition(t.status('orders'), 'Progressing')?.reason], ['Provisioning', 'RollingOut']);
    t.cluster.rollOut(t.ref('StatefulSet', 'orders-replica'));
    await t.reconcile('orders');
    assert.deepEqual([t.status('orders')?.phase, t.status('orders')?.readyReplicas], ['Ready', 3]);
    assert.deepEqual([t.status('orders')?.primary, t.status('orders')?.streamingReplicas], ['orders-0', 2]);

    await t.edit('orders', { replicas: 1 });
    await t.reconcile('orders');
    assert.equal(t.statefulSet('orders-replica'), undefined);
    assert.equal(t.cluster.get(t.ref('Service', 'orders-ro')), undefined);
    assert.deepEqual([replicas('orders'), t.status('orders')?.phase, t.status('orders')?.streamingReplicas], [1, 'Ready', 0]);
  });

  it("keeps the volume claims' size when spec.storage changes, and says so", async () => {
    const t = setup();
    await t.create('orders', { engine: 'postgresql', version: '16', storage: '1Gi' });
    await t.reconcile('orders');
    await t.edit('orders', { storage: '5Gi' });
    await t.reconcile('orders');
    assert.equal(claimSize(t.statefulSet('orders')), '1Gi');
    assert.equal(condition(t.status('orders'), 'Degraded')?.reason, 'StorageNotResized');
  });

  it('reports a refused apply as Failed and retries in a minute', async () => {
    const t = setup();
    const invalid = fail(422, 'Invalid', 'StatefulSet.apps "orders" is invalid: spec.replicas: Invalid value');
    t.cluster.refuse((w) => (w.kind === 'StatefulSet' ? invalid : undefined));
    await t.create('orders', { engine: 'postgresql', version: '16', storage: '1Gi' });
    assert.deepEqual(await t.reconcile('orders'), { requeueAfter: 60_000 });
    assert.equal(t.status('orders')?.phase, 'Failed');
    assert.equal(condition(t.status('orders'), 'Degraded')?.reason, 'ApplyFailed');
  });

  it('ends quietly when the Database is deleted while its reconcile runs, or its namespace is going', async () => {
    const t = setup();
    await t.create('orders', { engine: 'postgresql', version: '16', storage: '1Gi' });
    t.informers.databases.hold();
    await t.admin.delete(t.ref('Database', 'orders'));
    assert.equal(await t.reconcile('orders'), undefined);

    t.informers.databases.release();
    await t.create('billing', { engine: 'postgresql', version: '16', storage: '1Gi' });
    t.cluster.refuse(() => fail(403, 'Forbidden', 'namespace shop is being terminated', [{ reason: 'NamespaceTerminating' }]));
    assert.equal(await t.reconcile('billing'), undefined);
    assert.equal(t.status('billing'), undefined);
  });
});
