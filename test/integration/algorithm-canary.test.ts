// Canary rollouts of the Algorithm controller against a real Prometheus (Debian's `prometheus`
// on loopback) scraping an exporter whose request counters the test controls: a healthy canary
// is promoted, a failing one rolled back (Event + condition naming value and threshold), one
// without samples is not promoted and ends Inconclusive, an unreachable Prometheus never
// promotes, and the analysis counters survive a restart of the operator.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, Manager, silentLogger, type KubeObject, type Logger } from '../../src/kube/index.js';
import { registerAlgorithmController, type AlgorithmAnalysisOptions } from '../../src/controllers/algorithm-controller.js';
import type { AlgorithmStatus } from '../../constructs/api-types.js';
import { defaultSuccessRateQuery, renderQuery } from '../../src/controllers/canary-analysis.js';
import { queryPrometheus } from '../../src/controllers/prometheus-query.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { startPrometheus, type PrometheusServer } from '../support/prometheus.js';
import { RequestExporter } from '../support/request-exporter.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const stableImage = 'registry.alien6.io/algo/reco:2.1.4';
const canaryImage = 'registry.alien6.io/algo/reco:2.2.0';
const window = '5s';

let cluster: TestCluster;
let admin: KubeClient;
let me: Identity;
let exporter: RequestExporter;
let target: string;
let prometheus: PrometheusServer;
let shared: { manager: Manager; ns: string };
const cleanups: (() => Promise<void>)[] = [];

const logger: Logger = {
  ...silentLogger,
  error: (fields, message) => process.stderr.write(`controller error: ${message} ${JSON.stringify(fields)}\n`),
};

function analysis(prometheusUrl: string, intervalMs = 1500): AlgorithmAnalysisOptions {
  return { prometheusUrl, intervalMs, successChecks: 3, failureThreshold: 4, window, queryTimeoutMs: 2000 };
}

function startOperator(ns: string, options: AlgorithmAnalysisOptions): Manager {
  const manager = new Manager({ client: new KubeClient(me.kubeConfig), leaderElection: false, logger });
  registerAlgorithmController(manager, { namespace: ns, logger, analysis: options });
  manager.start();
  return manager;
}

async function stopOperator(manager: Manager): Promise<void> {
  await manager.stop();
  manager.client.close();
}

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  me = await newIdentity(cluster, 'algorithm-canary');
  exporter = new RequestExporter();
  target = await exporter.listen();
  prometheus = await startPrometheus({ targets: [target], scrapeInterval: '1s' });
  const ns = uniqueName('algo-canary');
  await createNamespace(cluster.kubeConfig, ns);
  shared = { manager: startOperator(ns, analysis(prometheus.url)), ns };
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  if (shared) await stopOperator(shared.manager);
  await prometheus?.stop();
  await exporter?.close();
  admin?.close();
});

const algorithmRef = (ns: string, name: string) => ({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name });

async function createAlgorithm(ns: string, name: string, canary: { successRate: number } | undefined): Promise<void> {
  exporter.setTraffic({ namespace: ns, algorithm: name, track: 'stable' }, { rps: 50, successRate: 1 });
  exporter.setTraffic({ namespace: ns, algorithm: name, track: 'canary' }, canary && { rps: 20, successRate: canary.successRate });
  await admin.create({
    apiVersion: 'ai.alien6.io/v1',
    kind: 'Algorithm',
    metadata: { name, namespace: ns },
    spec: {
      image: stableImage,
      replicas: 3,
      scaling: { minReplicas: 1, maxReplicas: 10 },
      lifecycle: { canaryWeight: 20, successThreshold: 0.99, rollbackOnDrift: true },
    },
  });
}

async function status(ns: string, name: string): Promise<AlgorithmStatus> {
  return ((await admin.get(algorithmRef(ns, name))).status ?? {}) as AlgorithmStatus;
}

async function waitForPhase(ns: string, name: string, phase: string, timeoutMs = 60_000): Promise<AlgorithmStatus> {
  return waitFor(
    `${name} ${phase}`,
    async () => {
      const s = await status(ns, name);
      return s.phase === phase ? s : undefined;
    },
    { timeoutMs },
  );
}

/** Waits until Prometheus has enough samples for the canary's success rate (the window is filled). */
async function waitForCanarySamples(url: string, ns: string, name: string): Promise<void> {
  const query = renderQuery(defaultSuccessRateQuery, { namespace: ns, name, track: 'canary', window });
  await waitFor('canary samples in Prometheus', async () => (await queryPrometheus(url, query)).kind === 'value', {
    timeoutMs: 30_000,
    intervalMs: 500,
  });
}

async function startCanary(ns: string, name: string): Promise<number> {
  await admin.patch(algorithmRef(ns, name), 'merge', { spec: { image: canaryImage } });
  return performance.now();
}

async function deployment(ns: string, name: string): Promise<KubeObject | undefined> {
  return admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name }).catch(() => undefined);
}

type DeploymentSpec = { replicas?: number; template: { spec: { containers: { image: string }[] } } };
const imageOf = (d: KubeObject | undefined) => (d?.spec as DeploymentSpec | undefined)?.template.spec.containers[0]!.image;
const replicasOf = (d: KubeObject | undefined) => (d?.spec as { replicas?: number } | undefined)?.replicas;

type EventLike = { type: string; reason: string; message: string; involvedObject?: { kind?: string } };

async function events(ns: string, name: string): Promise<EventLike[]> {
  const { items } = await admin.list({ apiVersion: 'v1', kind: 'Event' }, { namespace: ns, fieldSelector: `involvedObject.name=${name}` });
  return items as unknown as EventLike[];
}

describe('canary analysis against a real Prometheus', { concurrency: true }, () => {
  it('promotes a canary at 0.999, with fixed canary replicas and the weights in status', async (t) => {
    const { ns } = shared;
    const name = 'healthy';
    await createAlgorithm(ns, name, { successRate: 0.999 });
    await waitForPhase(ns, name, 'Running');
    await waitForCanarySamples(prometheus.url, ns, name);
    const started = await startCanary(ns, name);

    const canary = await waitForPhase(ns, name, 'Canary', 20_000);
    assert.equal(canary.canaryImage, canaryImage);
    assert.equal(canary.stableImage, stableImage);
    assert.equal(canary.desiredWeight, 20);
    // The canary runs beside the stable track with ceil(3 × 20 / 100) = 1 fixed replica; the HPA scales the stable track only.
    const canaryDeployment = await waitFor('the canary Deployment', () => deployment(ns, `${name}-canary`));
    assert.equal(imageOf(canaryDeployment), canaryImage);
    assert.equal(replicasOf(canaryDeployment), 1);
    assert.equal(imageOf(await deployment(ns, name)), stableImage);
    const hpa = await admin.get({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: ns, name });
    assert.equal((hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name, name);
    // Actual weight: 1 ready canary of 4 ready pods.
    await waitFor('actualWeight 25', async () => (await status(ns, name)).actualWeight === 25, { timeoutMs: 10_000 });

    const promoted = await waitFor(
      'promotion',
      async () => {
        const s = await status(ns, name);
        return s.stableImage === canaryImage ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const promotedAfter = performance.now() - started;
    assert.equal(promoted.lastAnalysis?.result, 'Success');
    assert.equal(promoted.lastAnalysis?.consecutiveSuccesses, 3);
    assert.ok(promoted.lastAnalysis!.value! >= 0.99, `value ${promoted.lastAnalysis?.value}`);
    const running = await waitForPhase(ns, name, 'Running', 30_000);
    t.diagnostic(
      `canary promoted ${promotedAfter.toFixed(0)} ms after the image change (interval 1.5 s, 3 checks); Running after ${(performance.now() - started).toFixed(0)} ms`,
    );
    assert.equal(running.canaryImage, undefined);
    assert.equal(running.desiredWeight, 0);
    assert.equal(imageOf(await deployment(ns, name)), canaryImage);
    await waitFor('the canary Deployment removed', async () => (await deployment(ns, `${name}-canary`)) === undefined, {
      timeoutMs: 10_000,
    });
    // Started and promoted are routine: log lines, not Events (Events are for what a user acts on).
    const onAlgorithm = (await events(ns, name)).filter((e) => e.involvedObject?.kind === 'Algorithm');
    assert.deepEqual(
      onAlgorithm.map((e) => `${e.type} ${e.reason}`),
      [],
    );
  });

  it('rolls back a canary at 0.90 with a Warning Event and a condition naming value and threshold', async (t) => {
    const { ns } = shared;
    const name = 'failing';
    await createAlgorithm(ns, name, { successRate: 0.9 });
    await waitForPhase(ns, name, 'Running');
    await waitForCanarySamples(prometheus.url, ns, name);
    const started = await startCanary(ns, name);
    await waitForPhase(ns, name, 'Canary', 20_000);
    const rolledBack = await waitForPhase(ns, name, 'RolledBack', 40_000);
    t.diagnostic(
      `canary rolled back ${(performance.now() - started).toFixed(0)} ms after the image change (interval 1.5 s, failureThreshold 4)`,
    );
    assert.equal(rolledBack.stableImage, stableImage);
    assert.equal(rolledBack.rolledBackImage, canaryImage);
    assert.equal(rolledBack.canaryImage, undefined);
    assert.equal(rolledBack.lastAnalysis?.result, 'Failure');
    assert.equal(rolledBack.lastAnalysis?.consecutiveFailures, 4);
    const degraded = rolledBack.conditions?.find((c) => c.type === 'Degraded');
    assert.equal(degraded?.status, 'True');
    assert.equal(degraded?.reason, 'CanaryRolledBack');
    assert.match(degraded!.message, /success rate 0\.9\d* below successThreshold 0\.99 for 4 consecutive checks/);
    const warning = (await events(ns, name)).find((e) => e.reason === 'RolledBack');
    assert.equal(warning?.type, 'Warning');
    assert.match(warning!.message, /0\.9\d* below successThreshold 0\.99/);
    // The stable track was never touched; the canary is gone and stays gone.
    assert.equal(imageOf(await deployment(ns, name)), stableImage);
    await waitFor('the canary Deployment removed', async () => (await deployment(ns, `${name}-canary`)) === undefined, {
      timeoutMs: 10_000,
    });
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await status(ns, name)).phase, 'RolledBack');
    assert.equal(await deployment(ns, `${name}-canary`), undefined, 'no new canary for a rolled-back image');
  });

  it('does not promote a canary without samples and marks it Inconclusive', async () => {
    const { ns } = shared;
    const name = 'silent';
    await createAlgorithm(ns, name, undefined);
    await waitForPhase(ns, name, 'Running');
    await startCanary(ns, name);
    await waitForPhase(ns, name, 'Canary', 20_000);
    const inconclusive = await waitForPhase(ns, name, 'Inconclusive', 40_000);
    assert.equal(inconclusive.lastAnalysis?.result, 'NoData');
    assert.equal(inconclusive.lastAnalysis?.value, undefined);
    assert.ok((inconclusive.lastAnalysis?.consecutiveNoData ?? 0) >= 4);
    assert.equal(inconclusive.stableImage, stableImage, 'not promoted');
    const progressing = inconclusive.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.reason, 'AnalysisInconclusive');
    assert.equal(imageOf(await deployment(ns, name)), stableImage);
    assert.equal(imageOf(await deployment(ns, `${name}-canary`)), canaryImage, 'paused: the canary stays for someone to look at');
    assert.ok((await events(ns, name)).some((e) => e.type === 'Warning' && e.reason === 'AnalysisInconclusive'));
  });

  it('never promotes while Prometheus is unreachable', async () => {
    const ns = uniqueName('algo-noprom');
    await createNamespace(cluster.kubeConfig, ns);
    const own = await startPrometheus({ targets: [target], scrapeInterval: '1s' });
    const manager = startOperator(ns, analysis(own.url));
    cleanups.push(
      () => stopOperator(manager),
      () => own.stop(),
    );
    const name = 'blind';
    await createAlgorithm(ns, name, { successRate: 0.999 });
    await waitForPhase(ns, name, 'Running');
    await own.stop();
    await startCanary(ns, name);
    await waitForPhase(ns, name, 'Canary', 20_000);
    // Well past the three checks that would have promoted it.
    const times = new Set<string>();
    await waitFor(
      'six failed analyses',
      async () => {
        const s = await status(ns, name);
        if (s.lastAnalysis?.result === 'Error' && s.lastAnalysis.time) times.add(s.lastAnalysis.time);
        assert.equal(s.stableImage, stableImage, 'promoted without an analysis');
        return times.size >= 6;
      },
      { timeoutMs: 40_000, intervalMs: 200 },
    );
    const s = await status(ns, name);
    assert.equal(s.phase, 'Canary');
    assert.equal(s.lastAnalysis?.consecutiveSuccesses, 0);
    const progressing = s.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.reason, 'AnalysisUnavailable');
    assert.match(progressing!.message, new RegExp(`Prometheus at ${own.url.replace(/\./g, '\\.')} is unreachable`));
    assert.equal(imageOf(await deployment(ns, name)), stableImage);
    assert.ok((await events(ns, name)).some((e) => e.type === 'Warning' && e.reason === 'AnalysisUnavailable'));
  });

  it('resumes the analysis counters after a restart of the operator', async () => {
    const ns = uniqueName('algo-restart');
    await createNamespace(cluster.kubeConfig, ns);
    // Checks 5 s apart: the operator is stopped between the second and the third, even on a busy machine.
    const options = analysis(prometheus.url, 5000);
    let manager = startOperator(ns, options);
    cleanups.push(() => stopOperator(manager));
    const name = 'resumed';
    await createAlgorithm(ns, name, { successRate: 0.999 });
    await waitForPhase(ns, name, 'Running');
    await waitForCanarySamples(prometheus.url, ns, name);
    await startCanary(ns, name);
    const two = await waitFor(
      'two successful checks',
      async () => {
        const s = await status(ns, name);
        return s.lastAnalysis?.consecutiveSuccesses === 2 ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    await stopOperator(manager);
    assert.equal((await status(ns, name)).stableImage, stableImage, 'not promoted before the restart');

    // A new operator process: its first check is the third in a row, and it promotes.
    const seen: number[] = [];
    manager = startOperator(ns, options);
    const promoted = await waitFor(
      'promotion after the restart',
      async () => {
        const s = await status(ns, name);
        if (s.lastAnalysis?.time !== two.lastAnalysis?.time) seen.push(s.lastAnalysis?.consecutiveSuccesses ?? -1);
        return s.stableImage === canaryImage ? s : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.equal(promoted.lastAnalysis?.consecutiveSuccesses, 3);
    assert.ok(
      seen.every((n) => n === 3),
      `counts seen after the restart: ${seen.join(', ')}`,
    );
    assert.equal(promoted.canaryStartTime, undefined);
  });
});
