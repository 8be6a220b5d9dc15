// The controller loop against real informers: failing keys back off without blocking the
// others, owned objects wake their owner, conflicts retry at once, requeueAfter is honoured.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  Controller,
  Informer,
  KubeClient,
  controllerReference,
  type ControllerMetrics,
  type KubeObject,
  type Logger,
  type ReconcileContext,
  type ReconcileOutcome,
} from '../../src/kube/index.js';
import { createNamespace, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let client: KubeClient;
before(async () => {
  cluster = await testCluster();
  client = new KubeClient(cluster.kubeConfig);
});
after(() => client?.close());

it('retries a failing key with growing delays, without blocking other keys; owned objects and conflicts requeue their owner', async () => {
  const ns = uniqueName('ctrl');
  await createNamespace(cluster.kubeConfig, ns);
  const configMaps = new Informer(client, { apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, labelSelector: 'test=controller' });
  const secrets = new Informer(client, { apiVersion: 'v1', kind: 'Secret' }, { namespace: ns });
  configMaps.start();
  secrets.start();

  const failures = 8;
  const attempts = new Map<string, { at: number; retries: number }[]>();
  let conflicted = false;
  let failingSucceeded = false;
  const reconciler = {
    async reconcile(key: string, ctx: ReconcileContext) {
      const list = attempts.get(key) ?? [];
      list.push({ at: performance.now(), retries: ctx.retries });
      attempts.set(key, list);
      const name = key.split('/')[1];
      // It fails `failures` times, and on until the other keys are done: were they held behind its
      // backoff, it would never succeed.
      const othersDone = [`${ns}/others-1`, `${ns}/others-2`].every((k) => attempts.has(k));
      if (name === 'failing' && (list.length <= failures || !othersDone)) throw new Error(`failure ${list.length}`);
      if (name === 'failing') failingSucceeded = true;
      if (name === 'conflict' && !conflicted) {
        conflicted = true;
        // A real 409: a write based on a stale read (of an object no watch maps to this key).
        const ref = { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'unowned' };
        const stale = await client.get(ref);
        await client.patch(ref, 'merge', { stringData: { bump: '1' } });
        await client.replace({ ...stale, stringData: { stale: 'write' } });
      }
      if (name === 'periodic' && list.length === 1) return { requeueAfter: 300 };
      return undefined;
    },
  };
  const outcomes: ReconcileOutcome[] = [];
  const metrics: ControllerMetrics = { reconcileFinished: (_c, o) => outcomes.push(o), queueDepth: () => {}, retried: () => {} };
  const errors: string[] = [];
  const logger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: (f) => errors.push((f as { key: string }).key) };
  const controller = new Controller({
    name: 'test',
    for: configMaps,
    owns: [secrets],
    reconciler,
    workers: 1,
    metrics,
    logger,
    resyncPeriodMs: 0,
  });
  await controller.start();
  try {
    const cm = (name: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, labels: { test: 'controller' } },
    });
    await client.create(cm('failing'));
    await waitFor('first failure', () => (attempts.get(`${ns}/failing`)?.length ?? 0) >= 1);
    const owner = await client.create(cm('others-1'));
    await client.create(cm('others-2'));
    await client.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'unowned', namespace: ns } });
    await client.create(cm('conflict'));
    await client.create(cm('periodic'));

    // With one worker, only if the other keys were not held up by the failing one's backoff.
    await waitFor('the failing key finally succeeds', () => failingSucceeded, { timeoutMs: 30_000 });
    const tries = attempts.get(`${ns}/failing`)!;
    assert.deepEqual(
      tries.map((t) => t.retries),
      tries.map((_, i) => i),
      'the context counts retries',
    );
    const gaps = tries.slice(1, failures + 1).map((t, i) => t.at - tries[i]!.at);
    process.stderr.write(`delays between attempts of the failing key (ms): ${gaps.map((g) => g.toFixed(0)).join(', ')}\n`);
    gaps.forEach((gap, i) =>
      assert.ok(
        gap >= 5 * 2 ** i - 2,
        `retry ${i + 1} waited ${gap.toFixed(1)} ms, at least ${5 * 2 ** i} ms expected (gaps ${gaps.map((g) => g.toFixed(0))})`,
      ),
    );
    // The floors double: a flat delay fails them. (No ratio of gaps: a late first timer would skew it.)

    assert.equal(errors.filter((k) => k === `${ns}/failing`).length, tries.length - 1, 'every failure logged, the success not');

    // 409: retried at once, and not logged as an error.
    await waitFor('conflict retried', () => (attempts.get(`${ns}/conflict`)?.length ?? 0) >= 2);
    const c = attempts.get(`${ns}/conflict`)!;
    assert.ok(c[1]!.at - c[0]!.at < 5000, `conflict retried after ${(c[1]!.at - c[0]!.at).toFixed(0)} ms`);
    assert.equal(c[1]!.retries, 0, 'a conflict is not a failure');
    assert.ok(!errors.includes(`${ns}/conflict`));
    assert.ok(outcomes.includes('conflict'));

    // requeueAfter: a second reconcile about 300 ms later.
    await waitFor('periodic requeued', () => (attempts.get(`${ns}/periodic`)?.length ?? 0) >= 2);
    const p = attempts.get(`${ns}/periodic`)!;
    assert.ok(p[1]!.at - p[0]!.at >= 290, `requeued after ${(p[1]!.at - p[0]!.at).toFixed(0)} ms`);

    // An owned object's change wakes its owner.
    const before = attempts.get(`${ns}/others-1`)!.length;
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'child', namespace: ns, ownerReferences: [controllerReference(owner)] },
      stringData: { a: 'b' },
    });
    await waitFor('owner reconciled for its child', () => attempts.get(`${ns}/others-1`)!.length > before);
    assert.equal(attempts.get(`${ns}/others-2`)!.length, 1, 'no other key was woken');
  } finally {
    await controller.stop(5000);
    await configMaps.stop();
    await secrets.stop();
  }
});

it('stop drains the reconcile in flight and takes no new keys', async () => {
  const ns = uniqueName('ctrl-stop');
  await createNamespace(cluster.kubeConfig, ns);
  const informer = new Informer(client, { apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns });
  informer.start();
  const started: string[] = [];
  const finished: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const controller = new Controller({
    name: 'drain',
    for: informer,
    workers: 1,
    resyncPeriodMs: 0,
    reconciler: {
      async reconcile(key) {
        started.push(key);
        if (key.endsWith('/slow')) await gate;
        finished.push(key);
      },
    },
  });
  await controller.start();
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'slow', namespace: ns } });
  await waitFor('slow started', () => started.includes(`${ns}/slow`));
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'queued', namespace: ns } });
  await waitFor('queued key waiting', () => controller.queueDepth() >= 1);
  const stopping = controller.stop(10_000);
  setTimeout(release, 200);
  assert.equal(await stopping, true, 'drained within the deadline');
  assert.ok(finished.includes(`${ns}/slow`), 'the in-flight reconcile finished');
  assert.ok(!started.includes(`${ns}/queued`), 'no new key was taken after stop');
  await informer.stop();
});

it('resyncs every object periodically even when nothing changed', async () => {
  const ns = uniqueName('ctrl-resync');
  await createNamespace(cluster.kubeConfig, ns);
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'still', namespace: ns, labels: { test: 'resync' } } });
  const informer = new Informer(client, { apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, labelSelector: 'test=resync' });
  informer.start();
  let count = 0;
  const controller = new Controller({
    name: 'resync',
    for: informer,
    resyncPeriodMs: 200,
    reconciler: { reconcile: async () => void count++ },
  });
  await controller.start();
  await waitFor('initial + 3 resyncs', () => count >= 4, { timeoutMs: 5000 });
  await controller.stop();
  await informer.stop();
});
