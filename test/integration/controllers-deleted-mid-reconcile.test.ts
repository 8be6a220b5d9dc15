// An Algorithm or a Database deleted while its reconcile runs (a preview's namespace torn down
// under it): the status write, or an apply into the namespace that is gone, meets 404, and the
// reconcile ends there — no error, no retry, no retry count. The reconcilers get a cache that
// still holds the object (what an informer holds until the DELETED event arrives); everything
// else is the real API server.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, type Informer, type KindRef, type KubeObject } from '../../src/kube/index.js';
import { AlgorithmReconciler } from '../../src/controllers/algorithm-controller.js';
import { DatabaseReconciler } from '../../src/controllers/database-controller.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { createNamespace, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let admin: KubeClient;
let ns: string;
let cluster: TestCluster;

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  ns = uniqueName('deleted-mid');
  await createNamespace(cluster.kubeConfig, ns);
});

after(() => admin?.close());

/** A synced cache frozen at one moment: `objects` are what it still holds. */
function staleCache(kind: KindRef, objects: KubeObject[] = []): Informer<KubeObject> {
  const byKey = new Map(objects.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
  return {
    kind,
    get: (key: string) => byKey.get(key),
    lookup: (key: string) => byKey.get(key),
    list: (namespace?: string) => [...byKey.values()].filter((o) => !namespace || o.metadata.namespace === namespace),
  } as unknown as Informer<KubeObject>;
}

/** Creates the object, then deletes it: the copy returned is what a lagging cache still holds. */
async function createdThenDeleted(obj: KubeObject): Promise<KubeObject> {
  const created = await admin.create(obj);
  await admin.delete({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: ns, name: obj.metadata.name! });
  await assert.rejects(admin.get({ apiVersion: obj.apiVersion, kind: obj.kind, namespace: ns, name: obj.metadata.name! }), /not found/);
  return created;
}

const context = () => ({ signal: new AbortController().signal, retries: 0 });

/** The Database reconciler on a cache that still holds `stale` and nothing else. */
const databaseReconciler = (stale: KubeObject) =>
  new DatabaseReconciler(admin, {
    databases: staleCache({ apiVersion: 'mycompany.com/v1', kind: 'Database' }, [stale]),
    statefulSets: staleCache({ apiVersion: 'apps/v1', kind: 'StatefulSet' }),
    services: staleCache({ apiVersion: 'v1', kind: 'Service' }),
    secrets: staleCache({ apiVersion: 'v1', kind: 'Secret' }),
    configMaps: staleCache({ apiVersion: 'v1', kind: 'ConfigMap' }),
  });

it('a Database deleted during its reconcile ends the reconcile quietly', async () => {
  const stale = await createdThenDeleted({
    apiVersion: 'mycompany.com/v1',
    kind: 'Database',
    metadata: { name: 'gone', namespace: ns },
    spec: { engine: 'postgresql', version: '16', storage: '1Gi' },
  });
  assert.equal(await databaseReconciler(stale).reconcile(`${ns}/gone`, context()), undefined);
});

it('an Algorithm deleted during its reconcile ends the reconcile quietly', async () => {
  const stale = await createdThenDeleted({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name: 'gone', namespace: ns },
    spec: { image: 'registry.alien6.io/algo/small:1.0.0' },
  });
  // Progress written at once, so that the status write meets the deletion (else it waits, and a later reconcile finds nothing).
  const reconciler = new AlgorithmReconciler(
    admin,
    {
      algorithms: staleCache({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' }, [stale]),
      deployments: staleCache({ apiVersion: 'apps/v1', kind: 'Deployment' }),
      services: staleCache({ apiVersion: 'v1', kind: 'Service' }),
      autoscalers: staleCache({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }),
      budgets: staleCache({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }),
      configMaps: staleCache({ apiVersion: 'v1', kind: 'ConfigMap' }),
    },
    { progressIntervalMs: 0 },
  );
  assert.equal(await reconciler.reconcile(`${ns}/gone`, context()), undefined);
});

it('a Database whose namespace is gone by the time it is applied ends the reconcile quietly', async () => {
  const doomed = uniqueName('deleted-ns');
  await createNamespace(cluster.kubeConfig, doomed);
  const stale = await admin.create({
    apiVersion: 'mycompany.com/v1',
    kind: 'Database',
    metadata: { name: 'db', namespace: doomed },
    spec: { engine: 'postgresql', version: '16', storage: '1Gi' },
  });
  await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: doomed });
  await waitFor(
    `namespace ${doomed} gone`,
    () =>
      admin.get({ apiVersion: 'v1', kind: 'Namespace', name: doomed }).then(
        () => false,
        () => true,
      ),
    { timeoutMs: 60_000 },
  );
  assert.equal(await databaseReconciler(stale).reconcile(`${doomed}/db`, context()), undefined);
});
