// The Algorithm controller on the seed `recommendation-engine-v2`, run through its registration
// function by a Manager on a fresh identity: the workloads it renders, Running/Ready, the CPU
// fallback when the custom metrics API is absent, zero writes when resyncing an unchanged
// Algorithm, and owned objects restored after a delete or an edit.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, Manager, type KubeObject, type Logger } from '../../src/kube/index.js';
import { registerAlgorithmController } from '../../src/controllers/algorithm-controller.js';
import type { AlgorithmStatus } from '../../constructs/api-types.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { seedExamples } from '../fixtures/crds/seed-examples.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let admin: KubeClient;
let me: Identity;
let manager: Manager;
let ns: string;
const reconciles: number[] = [];

/** Counts the controller's reconciles of the seed (its debug line). */
const logger: Logger = {
  debug: (fields) => {
    if ((fields as { key?: string }).key === `${ns}/recommendation-engine-v2`) reconciles.push(Date.now());
  },
  info: () => {},
  warn: () => {},
  error: (fields, message) => process.stderr.write(`controller error: ${message} ${JSON.stringify(fields)}\n`),
};

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  me = await newIdentity(cluster, 'algorithm-seed');
  ns = uniqueName('algo-seed');
  await createNamespace(cluster.kubeConfig, ns);
  manager = new Manager({ client: new KubeClient(me.kubeConfig), leaderElection: false, logger });
  // A short resync, so the test sees several reconciles of an unchanged Algorithm.
  registerAlgorithmController(manager, { namespace: ns, logger, resyncPeriodMs: 500 });
  manager.start();
});

after(async () => {
  await manager?.stop();
  manager?.client.close();
  admin?.close();
});

const get = <T extends KubeObject = KubeObject>(apiVersion: string, kind: string, name: string) =>
  admin.get<T>({ apiVersion, kind, namespace: ns, name });

it('runs the seed Algorithm: workloads, Running and Ready, CPU fallback, no writes when unchanged, owned objects restored', async (t) => {
  const { algorithm } = seedExamples();
  const started = performance.now();
  await admin.create({ ...algorithm, metadata: { ...algorithm.metadata, namespace: ns } } as unknown as KubeObject);

  const running = await waitFor(
    'the Algorithm Running with Ready=True',
    async () => {
      const live = await get('ai.alien6.io/v1', 'Algorithm', 'recommendation-engine-v2');
      const status = live.status as AlgorithmStatus | undefined;
      const ready = status?.conditions?.find((c) => c.type === 'Ready');
      return status?.phase === 'Running' && ready?.status === 'True' && status.readyReplicas === 3 ? live : undefined;
    },
    { timeoutMs: 60_000 },
  );
  const elapsed = performance.now() - started;
  t.diagnostic(`seed Algorithm Running and Ready after ${elapsed.toFixed(0)} ms`);

  // The workloads.
  const deployment = await get('apps/v1', 'Deployment', 'recommendation-engine-v2');
  type Container = { image: string; resources: { limits: Record<string, string> } };
  const dspec = deployment.spec as { replicas: number; template: { spec: { containers: Container[] } } };
  assert.equal(dspec.replicas, 3);
  assert.equal(dspec.template.spec.containers[0]!.image, 'registry.alien6.io/algo/reco:2.1.4');
  assert.equal(dspec.template.spec.containers[0]!.resources.limits['nvidia.com/gpu'], '2');
  assert.equal(deployment.metadata.ownerReferences?.[0]?.uid, running.metadata.uid, 'owned by the Algorithm');
  const service = await get('v1', 'Service', 'recommendation-engine-v2');
  assert.deepEqual(
    (service.spec as { ports: { port: number }[] }).ports.map((p) => p.port),
    [80],
  );
  const hpa = await get('autoscaling/v2', 'HorizontalPodAutoscaler', 'recommendation-engine-v2');
  const hspec = hpa.spec as {
    minReplicas: number;
    maxReplicas: number;
    scaleTargetRef: { name: string };
    metrics: { type: string; resource?: { name: string } }[];
  };
  assert.equal(hspec.minReplicas, 1);
  assert.equal(hspec.maxReplicas, 10);
  assert.equal(hspec.scaleTargetRef.name, 'recommendation-engine-v2');
  // No custom metrics API in the test cluster: CPU, and the condition says why.
  assert.deepEqual(
    hspec.metrics.map((m) => m.resource?.name ?? m.type),
    ['cpu'],
  );
  await get('policy/v1', 'PodDisruptionBudget', 'recommendation-engine-v2');
  await get('v1', 'ConfigMap', 'recommendation-engine-v2-config');
  const status = running.status as AlgorithmStatus;
  const autoscaling = status.conditions?.find((c) => c.type === 'AutoscalingDegraded');
  assert.equal(autoscaling?.status, 'True');
  assert.equal(autoscaling?.reason, 'CustomMetricsAPIUnavailable');
  assert.match(autoscaling!.message, /custom\.metrics\.k8s\.io\/v1beta1.*CPU/);
  assert.equal(status.stableImage, 'registry.alien6.io/algo/reco:2.1.4');
  assert.equal(status.observedGeneration, running.metadata.generation);
  assert.equal(status.retryCount, 0);
  // The HPA, not the operator, owns the replicas: the operator's own apply leaves them out.
  const ours = deployment.metadata.managedFields?.find((e) => e.manager === 'preview-operator' && e.operation === 'Apply');
  assert.ok(ours && !('f:replicas' in ((ours.fieldsV1?.['f:spec'] ?? {}) as object)), 'the operator does not apply spec.replicas');

  // Unchanged: several resyncs, zero writes by the operator's identity.
  await cluster.audit.settle();
  const mark = cluster.audit.mark();
  const before = reconciles.length;
  await waitFor('three more reconciles', () => reconciles.length >= before + 3, { timeoutMs: 20_000 });
  await cluster.audit.settle();
  const writes = cluster.audit.writes(mark, { user: me.username });
  assert.deepEqual(
    writes.map((w) => `${w.verb} ${w.requestURI}`),
    [],
    'an unchanged Algorithm is reconciled without writes',
  );

  // A deleted Service comes back (a new object), within one reconcile.
  const deletedAt = performance.now();
  await admin.delete({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'recommendation-engine-v2' });
  const recreated = await waitFor(
    'the Service recreated',
    async () => {
      const svc = await get('v1', 'Service', 'recommendation-engine-v2').catch(() => undefined);
      return svc && svc.metadata.uid !== service.metadata.uid ? svc : undefined;
    },
    { timeoutMs: 15_000 },
  );
  t.diagnostic(`deleted Service recreated after ${(performance.now() - deletedAt).toFixed(0)} ms`);
  assert.equal(recreated.metadata.ownerReferences?.[0]?.uid, running.metadata.uid);

  // An edited Deployment is put back.
  await admin.patch({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'recommendation-engine-v2' }, 'json', [
    { op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'registry.alien6.io/algo/reco:tampered' },
  ]);
  await waitFor(
    'the Deployment image restored',
    async () => {
      const d = await get('apps/v1', 'Deployment', 'recommendation-engine-v2');
      return (d.spec as typeof dspec).template.spec.containers[0]!.image === 'registry.alien6.io/algo/reco:2.1.4';
    },
    { timeoutMs: 15_000 },
  );
  // Edits of the replicas (the HPA's business) are left alone.
  const afterRestore = await get('apps/v1', 'Deployment', 'recommendation-engine-v2');
  assert.equal((afterRestore.spec as typeof dspec).replicas, 3);
});

it('reports what a user can fix (a quota refusing the Deployment) as Failed with a condition and an Event, then recovers', async () => {
  // The seed's Deployment already uses the namespace's only allowed Deployment.
  await admin.create({
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'one-deployment', namespace: ns },
    spec: { hard: { 'count/deployments.apps': '1' } },
  });
  await waitFor(
    'the quota counted',
    async () => {
      const quota = await admin.get({ apiVersion: 'v1', kind: 'ResourceQuota', namespace: ns, name: 'one-deployment' });
      return (quota.status as { used?: Record<string, string> } | undefined)?.used?.['count/deployments.apps'] === '1';
    },
    { timeoutMs: 30_000 },
  );
  await admin.create({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name: 'blocked', namespace: ns },
    spec: { image: 'registry.alien6.io/algo/small:1.0.0', replicas: 1 },
  });
  const failed = await waitFor(
    'Failed with the reason',
    async () => {
      const s = (await get('ai.alien6.io/v1', 'Algorithm', 'blocked')).status as AlgorithmStatus | undefined;
      return s?.phase === 'Failed' ? s : undefined;
    },
    { timeoutMs: 20_000 },
  );
  const degraded = failed.conditions?.find((c) => c.type === 'Degraded');
  assert.equal(degraded?.reason, 'ApplyFailed');
  assert.match(degraded!.message, /exceeded quota: one-deployment/);
  const { items } = await admin.list({ apiVersion: 'v1', kind: 'Event' }, { namespace: ns, fieldSelector: 'involvedObject.name=blocked' });
  assert.ok(
    items.some(
      (e) =>
        (e as unknown as { type: string; reason: string }).reason === 'ApplyFailed' &&
        (e as unknown as { type: string }).type === 'Warning',
    ),
  );

  await admin.delete({ apiVersion: 'v1', kind: 'ResourceQuota', namespace: ns, name: 'one-deployment' });
  await waitFor(
    'Running once the quota is gone',
    async () => {
      const s = (await get('ai.alien6.io/v1', 'Algorithm', 'blocked')).status as AlgorithmStatus | undefined;
      return s?.phase === 'Running' && s.conditions?.find((c) => c.type === 'Degraded')?.status === 'False';
    },
    { timeoutMs: 30_000 },
  );
});

it('hands the replicas to the HPA when scaling is added, without resetting them, and takes them back when it is removed; a disruption budget only while two pods can run', async () => {
  const name = 'handover';
  const replicas = async () => ((await get('apps/v1', 'Deployment', name)).spec as { replicas: number }).replicas;
  const phase = async () => ((await get('ai.alien6.io/v1', 'Algorithm', name)).status as AlgorithmStatus | undefined)?.phase;
  await admin.create({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name, namespace: ns },
    spec: { image: 'registry.alien6.io/algo/small:1.0.0', replicas: 2 },
  });
  await waitFor('Running with 2 replicas', async () => (await phase()) === 'Running' && (await replicas()) === 2, { timeoutMs: 30_000 });

  await admin.patch({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name }, 'merge', {
    spec: { scaling: { minReplicas: 1, maxReplicas: 5 } },
  });
  await waitFor(
    'the HPA created',
    () =>
      get('autoscaling/v2', 'HorizontalPodAutoscaler', name).then(
        () => true,
        () => false,
      ),
    { timeoutMs: 15_000 },
  );
  const before = reconciles.length;
  await waitFor('a few more reconciles', () => reconciles.length >= before + 3, { timeoutMs: 15_000 });
  assert.equal(await replicas(), 2, 'the replica count survives the operator letting go of it');
  const deployment = await get('apps/v1', 'Deployment', name);
  const ours = deployment.metadata.managedFields?.find((e) => e.manager === 'preview-operator' && e.operation === 'Apply');
  assert.ok(!('f:replicas' in ((ours?.fieldsV1?.['f:spec'] ?? {}) as object)), 'the operator no longer applies spec.replicas');

  await admin.patch({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name }, 'merge', {
    spec: { scaling: null, replicas: 4 },
  });
  await waitFor(
    '4 replicas, HPA gone',
    async () =>
      (await replicas()) === 4 &&
      (await get('autoscaling/v2', 'HorizontalPodAutoscaler', name).then(
        () => false,
        () => true,
      )),
    { timeoutMs: 15_000 },
  );

  // A disruption budget while two pods can run; none over a single pod (it would allow what no budget allows).
  await get('policy/v1', 'PodDisruptionBudget', name);
  await admin.patch({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name }, 'merge', { spec: { replicas: 1 } });
  await waitFor(
    '1 replica, budget gone',
    async () =>
      (await replicas()) === 1 &&
      (await get('policy/v1', 'PodDisruptionBudget', name).then(
        () => false,
        () => true,
      )),
    { timeoutMs: 15_000 },
  );
});
