// The Algorithm reconciler without a cluster: fake informers and an in-memory API server
// (test/support/fake-cluster.ts), a clock the test moves, and canary analysis answered by a
// function. The integration tests (test/integration/algorithm-*.test.ts) keep what needs the
// real API server: admission, quotas, the garbage collector, field ownership as it really is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { algorithmKind, algorithmLabel, envChecksumAnnotation, type AlgorithmSpec, type AlgorithmStatus } from '../../constructs/index.js';
import { silentLogger, type KubeObject, type ObjectRef } from '../kube/index.js';
import { FakeCluster, fail } from '../../test/support/fake-cluster.js';
import { algorithmChanged } from './algorithm-controller.js';
import { initialReplicasFieldManager } from './algorithm-apply.js';
import { AlgorithmReconciler, type AlgorithmControllerOptions } from './algorithm-reconciler.js';
import { PrometheusUnavailableError } from './prometheus-query.js';

const ns = 'shop';
const interval = 60_000;
const prometheus = 'http://prometheus.test';

/** A reconciler on a fake cluster, with the analysis answering `rates` in turn (a number, `empty` or `down`); its info lines in `logs`. */
function setup(
  options: AlgorithmControllerOptions = {},
  rates: (number | 'empty' | 'down')[] = [],
  namespaceLabels: Record<string, string> = {},
) {
  let now = new Date('2026-03-01T10:00:00Z');
  const cluster = new FakeCluster(() => now);
  cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: namespaceLabels } }, 'test-admin', {});
  const owned = { labelSelector: algorithmLabel };
  const informers = {
    namespaces: cluster.informer({ apiVersion: 'v1', kind: 'Namespace' }),
    algorithms: cluster.informer(algorithmKind),
    deployments: cluster.informer({ apiVersion: 'apps/v1', kind: 'Deployment' }, owned),
    services: cluster.informer({ apiVersion: 'v1', kind: 'Service' }, owned),
    autoscalers: cluster.informer({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }, owned),
    budgets: cluster.informer({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, owned),
    configMaps: cluster.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, owned),
  };
  const queries: string[] = [];
  const logs: string[] = [];
  const logger = {
    ...silentLogger,
    info: (fields: object, message?: string) => logs.push(`${(fields as { reason?: string }).reason}: ${message}`),
  };
  const reconciler = new AlgorithmReconciler(cluster.client(), informers, {
    now: () => now,
    logger,
    analysis: {
      intervalMs: interval,
      successChecks: 3,
      failureThreshold: 2,
      prometheusUrl: prometheus,
      queryPrometheus: async (_url, query) => {
        queries.push(query);
        const rate = rates.shift();
        if (rate === 'down' || rate === undefined) {
          throw new PrometheusUnavailableError(`Prometheus at ${prometheus} is unreachable: ECONNREFUSED`);
        }
        return rate === 'empty' ? { kind: 'empty' } : { kind: 'value', value: rate };
      },
    },
    ...options,
  });
  const admin = cluster.client('test-admin');
  const ref = (kind: string, name: string): ObjectRef => ({
    apiVersion: kind === 'Algorithm' ? algorithmKind.apiVersion : 'apps/v1',
    kind,
    namespace: ns,
    name,
  });
  return {
    cluster,
    admin,
    informers,
    queries,
    logs,
    /** The status writes of the Algorithm so far. */
    statusWrites: () => cluster.writesSince(0).filter((w) => w.includes('Algorithm') && w.includes('/status')),
    reconcile: (name: string, retries = 0) => reconciler.reconcile(`${ns}/${name}`, { signal: new AbortController().signal, retries }),
    create: (name: string, spec: AlgorithmSpec) => admin.create({ ...algorithmKind, metadata: { name, namespace: ns }, spec }),
    edit: (name: string, spec: Partial<AlgorithmSpec> | Record<string, unknown>) => admin.patch(ref('Algorithm', name), 'merge', { spec }),
    status: (name: string) => cluster.get(ref('Algorithm', name))?.status as AlgorithmStatus,
    deployment: (name: string) => cluster.get(ref('Deployment', name)),
    rollOut: (name: string) => cluster.rollOut(ref('Deployment', name)),
    advance: (ms: number) => (now = new Date(now.getTime() + ms)),
  };
}

const condition = (status: AlgorithmStatus, type: string) => status.conditions?.find((c) => c.type === type);
const image = (deployment: KubeObject | undefined) =>
  (deployment?.spec as { template: { spec: { containers: { image: string }[] } } } | undefined)?.template.spec.containers[0]?.image;
const replicas = (deployment: KubeObject | undefined) => (deployment?.spec as { replicas?: number } | undefined)?.replicas;

describe('the Algorithm reconciler', () => {
  it("in a preview's namespace, no disruption budget: the author keeps one pod unready and it would hold the drain of the other's node", async () => {
    const t = setup({}, [], { 'preview.alien6.io/environment': 'pr-1-shop-abc' });
    await t.create('reco', { image: 'reco:1', replicas: 2 });
    await t.reconcile('reco');
    const applied = t.cluster
      .writesSince(0)
      .filter((w) => w.startsWith('apply'))
      .sort();
    assert.deepEqual(applied, ['apply ConfigMap reco-config', 'apply Deployment reco', 'apply Service reco']);
  });

  it('creates the workloads; a rollout done within the progress interval writes one status, Running; unchanged, nothing', async () => {
    const t = setup();
    await t.create('reco', { image: 'reco:1', replicas: 2 });
    assert.deepEqual(await t.reconcile('reco'), { requeueAfter: 10_000 }, 'Pending waits the progress interval');
    const kinds = t.cluster
      .writesSince(0)
      .filter((w) => w.startsWith('apply'))
      .sort();
    assert.deepEqual(kinds, [
      'apply ConfigMap reco-config',
      'apply Deployment reco',
      'apply PodDisruptionBudget reco',
      'apply Service reco',
    ]);
    const algorithm = t.cluster.get({ ...algorithmKind, namespace: ns, name: 'reco' })!;
    assert.equal(t.deployment('reco')?.metadata.ownerReferences?.[0]?.uid, algorithm.metadata.uid);
    assert.equal(replicas(t.deployment('reco')), 2);
    t.advance(3000);
    // Progressing, counted from the Deployment's creation (its time is cut to whole seconds): 8 s to go.
    assert.deepEqual(await t.reconcile('reco'), { requeueAfter: 8000 });
    assert.deepEqual(t.statusWrites(), [], 'progress alone is not written within the interval');

    t.rollOut('reco');
    assert.equal(await t.reconcile('reco'), undefined);
    const running = t.status('reco');
    assert.equal(running.phase, 'Running');
    const summary = [condition(running, 'Ready')?.status, running.readyReplicas, running.stableImage, running.retryCount];
    assert.deepEqual(summary, ['True', 2, 'reco:1', 0]);
    assert.equal(t.statusWrites().length, 1, 'one status write: Running');
    assert.deepEqual(t.logs, [], 'nothing worth telling');

    const mark = t.cluster.writes.length;
    t.advance(1000);
    await t.reconcile('reco');
    await t.reconcile('reco');
    assert.deepEqual(t.cluster.writesSince(mark), [], 'an unchanged Algorithm is reconciled without writes');
  });

  it('writes Progressing once a rollout outlasts the progress interval, then nothing more until it is done', async () => {
    const t = setup();
    await t.create('reco', { image: 'reco:1', replicas: 2 });
    await t.reconcile('reco');
    t.advance(11_000);
    assert.equal(await t.reconcile('reco'), undefined);
    const progressing = t.status('reco');
    assert.deepEqual([progressing.phase, condition(progressing, 'Ready')?.reason], ['Progressing', 'RollingOut']);
    assert.equal(progressing.stableImage, 'reco:1');
    // A spec change re-applies the Deployment: its progress waits again, counted from the apply.
    await t.edit('reco', { replicas: 3 });
    assert.deepEqual(await t.reconcile('reco'), { requeueAfter: 10_000 });
    assert.equal(t.status('reco').observedGeneration, 1, 'observedGeneration alone waits too');
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.deepEqual([t.status('reco').phase, t.status('reco').readyReplicas, t.status('reco').observedGeneration], ['Running', 3, 2]);
    assert.equal(t.statusWrites().length, 2, 'Progressing, then Running');
  });

  it('writes progress at once with an interval of 0', async () => {
    const t = setup({ progressIntervalMs: 0 });
    await t.create('reco', { image: 'reco:1' });
    assert.equal(await t.reconcile('reco'), undefined);
    assert.deepEqual([t.status('reco').phase, condition(t.status('reco'), 'Ready')?.reason], ['Pending', 'Pending']);
    await t.reconcile('reco');
    assert.equal(t.status('reco').phase, 'Progressing');
  });

  it('rolls a new image out on the stable track when canaryWeight is 0', async () => {
    const t = setup();
    await t.create('reco', { image: 'reco:1' });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    await t.edit('reco', { image: 'reco:2' });
    await t.reconcile('reco');
    assert.equal(image(t.deployment('reco')), 'reco:2');
    assert.deepEqual([t.status('reco').phase, condition(t.status('reco'), 'Progressing')?.reason], ['Progressing', 'RollingUpdate']);
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.deepEqual([t.status('reco').phase, t.status('reco').stableImage], ['Running', 'reco:2']);
  });

  it('runs a canary beside the stable image and promotes it after successChecks good analyses', async () => {
    const t = setup({}, [0.999, 0.999, 0.998]);
    await t.create('reco', { image: 'reco:1', replicas: 4, lifecycle: { canaryWeight: 25, successThreshold: 0.99 } });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    await t.edit('reco', { image: 'reco:2' });

    assert.deepEqual(await t.reconcile('reco'), { requeueAfter: interval }, 'the first analysis is one interval away');
    const canary = t.deployment('reco-canary');
    assert.deepEqual([image(t.deployment('reco')), image(canary), replicas(canary)], ['reco:1', 'reco:2', 1]);
    assert.deepEqual([t.status('reco').phase, t.status('reco').canaryImage, t.status('reco').desiredWeight], ['Canary', 'reco:2', 25]);
    // 1 canary beside 4 stable replicas: 20 % in effect, not the 25 % asked. A routine step: a log line, not an Event.
    const started =
      'CanaryStarted: canary reco:2 started beside reco:1 with 20% of traffic by replica ratio ' +
      '(1 canary beside 4 stable replicas; canaryWeight 25%)';
    assert.ok(t.logs.includes(started), t.logs.join('\n'));

    t.rollOut('reco-canary');
    for (let check = 1; check <= 3; check++) {
      // The cache has not seen the promotion's status write when the next reconcile runs.
      if (check === 3) t.informers.algorithms.hold();
      t.advance(interval);
      await t.reconcile('reco');
    }
    await t.reconcile('reco');
    assert.equal(t.deployment('reco-canary'), undefined, 'decided from our own last write, not the stale cache: no second canary');
    t.informers.algorithms.release();
    assert.equal(t.queries.length, 3);
    assert.match(t.queries[0]!, /namespace="shop",algorithm="reco",track="canary"/);
    assert.equal(image(t.deployment('reco')), 'reco:2', 'the stable track takes the canary image');
    assert.equal(t.deployment('reco-canary'), undefined, 'the canary Deployment is pruned');
    assert.ok(t.logs.some((e) => e.startsWith('Promoted: canary reco:2 promoted after 3 consecutive checks')));
    assert.deepEqual(t.cluster.events(), [], 'no Event for a canary started and promoted');
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.deepEqual([t.status('reco').phase, condition(t.status('reco'), 'Progressing')?.reason], ['Running', 'RolloutComplete']);
  });

  it('rolls a failing canary back, keeps the stable image, and does not start it again', async () => {
    const t = setup({}, [0.5, 0.4]);
    const lifecycle = { canaryWeight: 50, successThreshold: 0.99, rollbackOnDrift: true };
    await t.create('reco', { image: 'reco:1', replicas: 2, lifecycle });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    await t.edit('reco', { image: 'reco:2' });
    await t.reconcile('reco');
    t.rollOut('reco-canary');
    for (let check = 1; check <= 2; check++) {
      t.advance(interval);
      await t.reconcile('reco');
    }
    const rolledBack = t.status('reco');
    assert.deepEqual([rolledBack.phase, rolledBack.stableImage, rolledBack.rolledBackImage], ['RolledBack', 'reco:1', 'reco:2']);
    assert.equal(condition(rolledBack, 'Degraded')?.reason, 'CanaryRolledBack');
    assert.equal(image(t.deployment('reco')), 'reco:1');
    assert.equal(t.deployment('reco-canary'), undefined);
    const rollback = 'Warning RolledBack: canary reco:2 success rate 0.4000 below successThreshold 0.99';
    assert.ok(t.cluster.events().some((e) => e.startsWith(rollback)));

    const mark = t.cluster.writes.length;
    t.advance(interval);
    assert.equal(await t.reconcile('reco'), undefined);
    assert.deepEqual(t.cluster.writesSince(mark), [], 'no canary starts again for the rolled-back image');
  });

  it('does not promote a canary it cannot analyse, and says why', async () => {
    const t = setup({}, ['down']);
    await t.create('reco', { image: 'reco:1', lifecycle: { canaryWeight: 20 } });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    await t.edit('reco', { image: 'reco:2' });
    await t.reconcile('reco');
    t.rollOut('reco-canary');
    t.advance(interval);
    await t.reconcile('reco');
    assert.equal(t.status('reco').phase, 'Canary');
    assert.equal(condition(t.status('reco'), 'Progressing')?.reason, 'AnalysisUnavailable');
    assert.equal(t.status('reco').lastAnalysis?.result, 'Error');
    assert.ok(t.cluster.events().some((e) => e.startsWith(`Warning AnalysisUnavailable: Prometheus at ${prometheus} is unreachable`)));
  });

  it('seeds the replicas of a new autoscaled Algorithm, and leaves them to the HPA', async () => {
    const t = setup();
    await t.create('reco', { image: 'reco:1', replicas: 7, scaling: { minReplicas: 1, maxReplicas: 5 } });
    await t.reconcile('reco');
    assert.equal(replicas(t.deployment('reco')), 5, 'spec.replicas within the bounds');
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.equal(condition(t.status('reco'), 'AutoscalingDegraded')?.reason, 'CPUTarget');
  });

  it('does not seed a new autoscaled Deployment again from a cache that has not seen its seed', async () => {
    const t = setup();
    // The cache sees the Deployment as the create left it: replicas held by nobody yet.
    t.cluster.refuse((w) => {
      if (w.fieldManager === initialReplicasFieldManager) t.informers.deployments.hold();
      return undefined;
    });
    await t.create('reco', { image: 'reco:1', replicas: 3, scaling: { minReplicas: 1, maxReplicas: 5 } });
    await t.reconcile('reco');
    assert.equal(replicas(t.deployment('reco')), 3);
    const mark = t.cluster.writes.length;
    await t.reconcile('reco');
    const seeds = t.cluster.writes.slice(mark).filter((w) => w.fieldManager === initialReplicasFieldManager);
    assert.deepEqual(seeds, [], 'the seed is not written again from the stale Deployment');
    assert.equal(replicas(t.deployment('reco')), 3);
  });

  it('hands the replicas to the HPA when scaling is added, keeps what the HPA set, and takes them back when scaling goes', async () => {
    const t = setup();
    t.cluster.customMetrics = ['request_latency_milliseconds'];
    await t.create('reco', { image: 'reco:1', replicas: 2 });
    await t.reconcile('reco');
    await t.edit('reco', { scaling: { minReplicas: 1, maxReplicas: 5, targetLatencyMs: 200 } });
    await t.reconcile('reco');
    const seeded = t.deployment('reco')!;
    assert.equal(replicas(seeded), 2, 'the replicas survive the operator letting go of them');
    const ours = seeded.metadata.managedFields?.find((e) => e.manager === 'preview-operator' && e.operation === 'Apply');
    assert.ok(ours && !('f:replicas' in (ours.fieldsV1?.['f:spec'] as object)), 'the operator does not apply spec.replicas');
    assert.ok(seeded.metadata.managedFields?.some((e) => e.manager === initialReplicasFieldManager));
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.equal(condition(t.status('reco'), 'AutoscalingDegraded')?.reason, 'LatencyTarget');
    const autoscaler = { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: ns, name: 'reco' };
    assert.ok(t.cluster.get(autoscaler));

    // The HPA scales; the operator leaves the replicas alone.
    const hpa = t.cluster.client('horizontal-pod-autoscaler');
    await hpa.patch({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'reco' }, 'merge', { spec: { replicas: 4 } });
    t.rollOut('reco');
    await t.reconcile('reco');
    const mark = t.cluster.writes.length;
    await t.reconcile('reco');
    assert.deepEqual(t.cluster.writesSince(mark), []);
    assert.equal(replicas(t.deployment('reco')), 4);

    await t.edit('reco', { scaling: null, replicas: 3 });
    await t.reconcile('reco');
    assert.equal(replicas(t.deployment('reco')), 3);
    assert.equal(t.cluster.get(autoscaler), undefined, 'the HPA is pruned');
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.equal(condition(t.status('reco'), 'AutoscalingDegraded'), undefined);
  });

  it('reports a refusal a user can fix as Failed with an Event, retries in a minute, and recovers', async () => {
    const t = setup();
    const lift = t.cluster.refuse((w) =>
      w.kind === 'Deployment' && w.verb === 'apply'
        ? fail(403, 'Forbidden', 'deployments.apps "reco" is forbidden: exceeded quota: one-deployment')
        : undefined,
    );
    await t.create('reco', { image: 'reco:1' });
    assert.deepEqual(await t.reconcile('reco'), { requeueAfter: 60_000 });
    assert.equal(t.status('reco').phase, 'Failed');
    assert.match(condition(t.status('reco'), 'Degraded')!.message, /exceeded quota: one-deployment/);
    assert.ok(t.cluster.events().some((e) => e.startsWith('Warning ApplyFailed:')));
    lift();
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.deepEqual([t.status('reco').phase, condition(t.status('reco'), 'Degraded')?.status], ['Running', 'False']);
  });

  it('counts a transient failure in status.retryCount and throws for a retry with backoff', async () => {
    const t = setup();
    t.cluster.refuse((w) => (w.kind === 'Service' ? fail(503, 'ServiceUnavailable', 'etcd leader changed') : undefined));
    await t.create('reco', { image: 'reco:1' });
    await assert.rejects(t.reconcile('reco', 2), /etcd leader changed/);
    assert.equal(t.status('reco').retryCount, 3);
  });

  it('ends quietly when the Algorithm is deleted while its reconcile runs (the cache still holds it)', async () => {
    // Progress written at once, so that the status write meets the deletion.
    const t = setup({ progressIntervalMs: 0 });
    await t.create('reco', { image: 'reco:1' });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    t.informers.algorithms.hold();
    await t.admin.delete({ ...algorithmKind, namespace: ns, name: 'reco' });
    assert.equal(t.deployment('reco'), undefined, 'the garbage collector took its workloads');
    const mark = t.cluster.writes.length;
    assert.equal(await t.reconcile('reco'), undefined);
    const writes = t.cluster.writesSince(mark);
    assert.ok(
      writes.some((w) => w.startsWith('apply Deployment')),
      'it ran on (into a namespace that still exists)',
    );
    assert.ok(!writes.some((w) => w.includes('/status')), 'no retry count, no status');
  });

  it('ends quietly when its namespace is being deleted: nothing left to converge or report', async () => {
    const t = setup();
    await t.create('reco', { image: 'reco:1' });
    const terminating = fail(403, 'Forbidden', 'namespace shop is being terminated', [{ reason: 'NamespaceTerminating' }]);
    t.cluster.refuse((w) => (w.verb === 'apply' ? terminating : undefined));
    assert.equal(await t.reconcile('reco'), undefined);
    assert.equal(t.status('reco'), undefined, 'no status written');
    assert.deepEqual(t.cluster.events(), []);
  });
  it('canary weight: the log line and status give the share in effect (3 stable + 1 canary serve 25 %, not the 20 % asked)', async () => {
    const t = setup({}, [0.999]);
    await t.create('reco', { image: 'reco:1', replicas: 3, lifecycle: { canaryWeight: 20, successThreshold: 0.99 } });
    await t.reconcile('reco');
    t.rollOut('reco');
    await t.reconcile('reco');
    await t.edit('reco', { image: 'reco:2' });
    await t.reconcile('reco');
    const started =
      'CanaryStarted: canary reco:2 started beside reco:1 with 25% of traffic by replica ratio ' +
      '(1 canary beside 3 stable replicas; canaryWeight 20%)';
    assert.ok(t.logs.includes(started), t.logs.join('\n'));
    t.rollOut('reco-canary');
    await t.reconcile('reco');
    const status = t.status('reco');
    assert.deepEqual([status.desiredWeight, status.actualWeight], [20, 25]);
    assert.match(
      condition(status, 'Progressing')?.message ?? '',
      /^canary reco:2 at 25% of traffic by replica ratio \(1 canary beside 3 stable replicas; canaryWeight 20%\)/,
    );
  });

  it('kstatus: Reconciling while it rolls out, Ready alone once running, Stalled when the apply is refused', async () => {
    const t = setup();
    const kstatus = () => {
      const generation = t.cluster.get({ ...algorithmKind, namespace: ns, name: 'reco' })!.metadata.generation;
      return ['Ready', 'Reconciling', 'Stalled'].map((type) => {
        const c = condition(t.status('reco'), type);
        return `${type}=${c?.status} ${c?.reason}${c?.observedGeneration === generation ? '' : ' (stale)'}`;
      });
    };
    await t.create('reco', { image: 'reco:1' });
    await t.reconcile('reco');
    t.advance(11_000);
    await t.reconcile('reco');
    assert.deepEqual(kstatus(), ['Ready=False RollingOut', 'Reconciling=True RollingUpdate', 'Stalled=False Progressing']);
    t.rollOut('reco');
    await t.reconcile('reco');
    assert.deepEqual(kstatus(), ['Ready=True Available', 'Reconciling=False Reconciled', 'Stalled=False Reconciled']);

    t.cluster.refuse((w) =>
      w.kind === 'Deployment' && w.verb === 'apply' ? fail(403, 'Forbidden', 'exceeded quota: one-deployment') : undefined,
    );
    await t.edit('reco', { image: 'reco:2' });
    await t.reconcile('reco');
    assert.deepEqual(kstatus(), ['Ready=False RollingOut', 'Reconciling=False Stalled', 'Stalled=True ApplyFailed']);
    assert.equal(t.status('reco').observedGeneration, 2);
  });
});

describe('which Algorithm events wake the controller', () => {
  const algorithm = (generation: number, annotations: Record<string, string> = {}, deletionTimestamp?: string): KubeObject => ({
    ...algorithmKind,
    metadata: { name: 'a', namespace: ns, generation, annotations, ...(deletionTimestamp ? { deletionTimestamp } : {}) },
  });

  it('spec changes, the env checksum and deletion; not its own status writes', () => {
    assert.equal(algorithmChanged({ type: 'add', object: algorithm(1) }), true);
    assert.equal(algorithmChanged({ type: 'update', old: algorithm(1), object: algorithm(1) }), false, 'a status write');
    assert.equal(algorithmChanged({ type: 'update', old: algorithm(1), object: algorithm(2) }), true);
    assert.equal(algorithmChanged({ type: 'update', old: algorithm(1), object: algorithm(1, { [envChecksumAnnotation]: 'b' }) }), true);
    assert.equal(algorithmChanged({ type: 'update', old: algorithm(1), object: algorithm(1, {}, '2026-03-01T10:00:00Z') }), true);
  });
});
