// A preview teardown writes nothing into a namespace that is going: 52 preview namespaces, each
// with an Algorithm and a Database and the workloads their controllers made, are deleted at once
// (as closing 52 pull requests does); the namespace controller removes the Deployments and
// StatefulSets, and the Algorithm and Database controllers, which see those deletions, must not
// put them back — the API server would refuse each create with 403 "being terminated". The audit
// log counts the controllers' writes during the teardown. A private cluster: the controllers
// watch every namespace, which in the shared cluster would include other test files' objects.
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { registerAlgorithmController } from '../../src/controllers/algorithm-controller.js';
import { registerDatabaseController } from '../../src/controllers/database-controller.js';
import { KubeClient, Manager, NotFoundError, silentLogger } from '../../src/kube/index.js';
import { startCluster, type Cluster } from '../cluster/start-cluster.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { newIdentity } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const previews = 52;
let cluster: Cluster | undefined;
after(() => cluster?.stop());

it(`tearing down ${previews} preview namespaces: no write into a terminating namespace`, { timeout: 600_000 }, async () => {
  cluster = await startCluster({ log: () => {}, keepsProcessAlive: false });
  await installCrds(cluster.kubeConfig);
  const identity = await newIdentity(cluster, 'workload-controllers');
  const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'teardown-test' });
  const client = new KubeClient(identity.kubeConfig);
  const manager = new Manager({ client, leaderElection: false, logger: silentLogger, drainDeadlineMs: 5000 });
  registerAlgorithmController(manager, { workers: 4 });
  registerDatabaseController(manager, { workers: 4 });
  manager.start();
  try {
    const namespaces = Array.from({ length: previews }, (_, i) => `pr-${i + 1}-teardown`);
    for (const namespace of namespaces) await createPreview(admin, namespace);
    await waitFor(
      "every preview's workloads",
      async () => {
        const [deployments, statefulSets] = await Promise.all([
          admin.list({ apiVersion: 'apps/v1', kind: 'Deployment' }),
          admin.list({ apiVersion: 'apps/v1', kind: 'StatefulSet' }),
        ]);
        const where = (items: { metadata: { namespace?: string } }[]) => new Set(items.map((i) => i.metadata.namespace));
        return namespaces.every((n) => where(deployments.items).has(n) && where(statefulSets.items).has(n));
      },
      { timeoutMs: 240_000, intervalMs: 1000 },
    );
    await quiet(cluster, identity.username);

    const mark = cluster.audit.mark();
    const started = Date.now();
    await Promise.all(namespaces.map((name) => admin.delete({ apiVersion: 'v1', kind: 'Namespace', name })));
    await waitFor(
      'every namespace gone',
      async () => {
        const gone = await Promise.all(
          namespaces.map((name) =>
            admin.get({ apiVersion: 'v1', kind: 'Namespace', name }).then(
              () => false,
              (err: unknown) => (err instanceof NotFoundError ? true : Promise.reject(err)),
            ),
          ),
        );
        return gone.every(Boolean);
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
    );
    await cluster.audit.settle();
    const writes = cluster.audit.writes(mark, { user: identity.username });
    const refused = writes.filter((w) => w.responseStatus?.code === 403);
    const byVerb = tally(
      writes.map(
        (w) =>
          `${w.verb} ${w.objectRef?.resource ?? ''}${w.objectRef?.subresource ? `/${w.objectRef.subresource}` : ''} ${w.responseStatus?.code}`,
      ),
    );
    process.stderr.write(
      `# teardown of ${previews} namespaces in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
        `${writes.length} writes by the Algorithm and Database controllers, ${refused.length} refused with 403\n# ${JSON.stringify(byVerb)}\n`,
    );
    assert.deepEqual(
      refused.map((w) => `${w.verb} ${w.objectRef?.namespace}/${w.objectRef?.resource}/${w.objectRef?.name}`),
      [],
    );
  } finally {
    await manager.stop();
    client.close();
    admin.close();
  }
});

/** A preview's namespace, as the PreviewEnvironment controller makes it, with one Algorithm and one Database. */
async function createPreview(admin: KubeClient, namespace: string): Promise<void> {
  await admin.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { 'app.kubernetes.io/managed-by': 'preview-operator' } },
  });
  await admin.create({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name: 'api', namespace },
    spec: { image: 'registry.example.com/team/api:1.0', replicas: 1 },
  });
  await admin.create({
    apiVersion: 'mycompany.com/v1',
    kind: 'Database',
    metadata: { name: 'db', namespace },
    spec: { engine: 'postgresql', version: '16', storage: '1Gi', replicas: 1 },
  });
}

/** Until `user` has written nothing for 3 s: the controllers have converged. */
async function quiet(cluster: Cluster, user: string): Promise<void> {
  let mark = cluster.audit.mark();
  await waitFor(
    'the controllers to settle',
    async () => {
      await new Promise((r) => setTimeout(r, 3000));
      const writes = cluster.audit.writes(mark, { user });
      mark = cluster.audit.mark();
      return writes.length === 0;
    },
    { timeoutMs: 120_000, intervalMs: 0 },
  );
}

function tally(items: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}
