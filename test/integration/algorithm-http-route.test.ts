// With the Gateway API's HTTPRoute served (a minimal CRD stands in for it) and the operator
// configured for it, a canary's traffic is split by an HTTPRoute with the exact weights over
// one Service per track, instead of by replica ratio.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { KubeClient, Manager, silentLogger, type KubeObject, type Logger } from '../../src/kube/index.js';
import { registerAlgorithmController } from '../../src/controllers/algorithm-controller.js';
import type { AlgorithmStatus } from '../../constructs/api-types.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const httpRouteCrd = fileURLToPath(new URL('../fixtures/crds/httproutes.gateway.networking.k8s.io.yaml', import.meta.url));

let cluster: TestCluster;
let admin: KubeClient;
let me: Identity;
let ns: string;
let manager: Manager;

const reconciles: string[] = [];
const logger: Logger = {
  ...silentLogger,
  debug: (fields) => void reconciles.push((fields as { key?: string }).key ?? ''),
  error: (fields, message) => process.stderr.write(`controller error: ${message} ${JSON.stringify(fields)}\n`),
};

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  await installCrds(cluster.kubeConfig, [httpRouteCrd]);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  me = await newIdentity(cluster, 'algorithm-route');
  ns = uniqueName('algo-route');
  await createNamespace(cluster.kubeConfig, ns);
  manager = new Manager({ client: new KubeClient(me.kubeConfig), leaderElection: false, logger });
  // No Prometheus: the canary stays under analysis (never promoted), which is all this test needs.
  registerAlgorithmController(manager, { namespace: ns, logger, gatewayApi: true, analysis: { intervalMs: 60_000 }, resyncPeriodMs: 500 });
  manager.start();
});

after(async () => {
  await manager?.stop();
  manager?.client.close();
  admin?.close();
});

interface Route {
  spec: {
    parentRefs: { kind: string; name: string; port?: number }[];
    rules: { backendRefs: { name: string; port: number; weight: number }[] }[];
  };
}

it('splits canary traffic with an HTTPRoute carrying the exact weights', async () => {
  const name = 'routed';
  await admin.create({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name, namespace: ns },
    spec: { image: 'registry.alien6.io/algo/reco:1.0.0', replicas: 4, lifecycle: { canaryWeight: 15 } },
  });
  const get = (apiVersion: string, kind: string, n: string) => admin.get({ apiVersion, kind, namespace: ns, name: n });
  const weights = async () => {
    const route = (await get('gateway.networking.k8s.io/v1', 'HTTPRoute', name)) as unknown as Route;
    return Object.fromEntries(route.spec.rules[0]!.backendRefs.map((b) => [b.name, b.weight]));
  };
  await waitFor(
    'Running',
    async () => ((await get('ai.alien6.io/v1', 'Algorithm', name)).status as AlgorithmStatus | undefined)?.phase === 'Running',
  );
  // Without a canary everything goes to the stable track.
  assert.deepEqual(await weights(), { [`${name}-stable`]: 100, [`${name}-canary`]: 0 });
  const route = (await get('gateway.networking.k8s.io/v1', 'HTTPRoute', name)) as unknown as Route & KubeObject;
  assert.deepEqual(
    route.spec.parentRefs.map((p) => `${p.kind}/${p.name}:${p.port}`),
    [`Service/${name}:80`],
    'attached to the algorithm Service (mesh)',
  );
  // Resyncs of the unchanged Algorithm write nothing, the route (read live, not cached) included.
  await cluster.audit.settle();
  const mark = cluster.audit.mark();
  const before = reconciles.length;
  await waitFor('three more reconciles', () => reconciles.length >= before + 3, { timeoutMs: 15_000 });
  await cluster.audit.settle();
  assert.deepEqual(
    cluster.audit.writes(mark, { user: me.username }).map((w) => `${w.verb} ${w.requestURI}`),
    [],
  );
  const stableSvc = await get('v1', 'Service', `${name}-stable`);
  assert.deepEqual((stableSvc.spec as { selector: Record<string, string> }).selector, {
    'ai.alien6.io/algorithm': name,
    'ai.alien6.io/track': 'stable',
  });

  await admin.patch({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name }, 'merge', {
    spec: { image: 'registry.alien6.io/algo/reco:1.1.0' },
  });
  const status = await waitFor(
    'Canary with the route weight in effect',
    async () => {
      const s = (await get('ai.alien6.io/v1', 'Algorithm', name)).status as AlgorithmStatus | undefined;
      return s?.phase === 'Canary' && s.actualWeight === 15 ? s : undefined;
    },
    { timeoutMs: 30_000 },
  );
  assert.equal(status.desiredWeight, 15);
  // Exactly 85/15, where a replica ratio of 1 canary to 4 stable would give 20.
  assert.deepEqual(await weights(), { [`${name}-stable`]: 85, [`${name}-canary`]: 15 });
  const canary = await get('apps/v1', 'Deployment', `${name}-canary`);
  assert.equal((canary.spec as { replicas: number }).replicas, 1);
  assert.match(status.conditions!.find((c) => c.type === 'Progressing')!.message, /by HTTPRoute/);
  // Analysis without a Prometheus configured is an error, never a promotion.
  assert.equal(status.stableImage, 'registry.alien6.io/algo/reco:1.0.0');
});
