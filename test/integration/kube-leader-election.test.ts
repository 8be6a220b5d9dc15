// Leader election with the defaults the operator ships (15 s lease, 10 s renew deadline,
// 2 s retry): exactly one leader; a leader killed without releasing is replaced once its lease expires (within 25 s);
// a graceful stop releases it, so the other leads after one retry; a replica that loses its lease stops its loops,
// campaigns again and, once the lease is free, leads again (the process is never restarted).
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Informer, KubeClient, Manager, formatMicroTime, silentLogger, type KubeObject } from '../../src/kube/index.js';
import { createNamespace, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'kube-leader-process.ts');

let cluster: TestCluster;
let client: KubeClient;
let ns: string;
const children: ChildProcess[] = [];
before(async () => {
  cluster = await testCluster();
  client = new KubeClient(cluster.kubeConfig);
  ns = uniqueName('leases');
  await createNamespace(cluster.kubeConfig, ns);
});
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  client?.close();
});

/** A manager in another process, and the lines it printed. */
function replica(lease: string, identity: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, cluster.kubeconfigPath, ns, lease, identity], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  let buffer = '';
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  const leadingSince = () => {
    const last = lines.filter((l) => l.startsWith('LEADING') || l.startsWith('NOT-LEADING')).at(-1);
    return last?.startsWith('LEADING') ? Number(last.split(' ')[1]) : undefined;
  };
  return { child, lines, leadingSince };
}

function inProcessManager(lease: string, identity: string) {
  const events: string[] = [];
  const manager = new Manager({
    client,
    logger: silentLogger,
    leaderElection: { namespace: ns, name: lease, identity },
    onLeadershipChange: (leading) => events.push(leading ? 'leading' : 'not-leading'),
  });
  return { manager, events };
}

async function holder(lease: string): Promise<string | undefined> {
  const l = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: lease });
  return (l.spec as { holderIdentity?: string }).holderIdentity ?? undefined;
}

it(
  'two managers on one Lease: exactly one leads; killed without release, the other leads once the lease expires, within 25 s',
  { timeout: 120_000 },
  async () => {
    const lease = 'kill-test';
    const a = replica(lease, 'replica-a');
    await waitFor('replica-a leads', () => a.leadingSince(), { timeoutMs: 30_000 });
    const b = inProcessManager(lease, 'replica-b');
    b.manager.start();
    try {
      // Several retry periods: b keeps trying, and never leads while a renews.
      for (let i = 0; i < 8; i++) {
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(b.manager.isLeader(), false, 'only one leader');
        assert.ok(a.leadingSince(), 'a still leads');
      }
      assert.equal(await holder(lease), 'replica-a');
      const l = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: lease });
      const spec = l.spec as { renewTime: string; leaseDurationSeconds: number };
      assert.match(spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/, 'MicroTime with 6 fractional digits');
      assert.equal(spec.leaseDurationSeconds, 15);

      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      await waitFor('replica-b leads', () => b.manager.isLeader(), { timeoutMs: 30_000, intervalMs: 50 });
      const takeover = Date.now() - killedAt;
      process.stderr.write(`takeover after SIGKILL of the leader: ${takeover} ms\n`);
      // The lease's 15 s from the last renewal, then b's next try (every 2 s) on a possibly busy API server.
      assert.ok(takeover < 25_000, `took over after ${takeover} ms`);
      // And not before: b counts the 15 s from when it last saw a renewal, at most two 2-s periods before the kill.
      assert.ok(takeover >= 10_000, `took over after ${takeover} ms, before the killed leader's lease expired`);
      assert.equal(await holder(lease), 'replica-b');
    } finally {
      await b.manager.stop();
    }
  },
);

it('graceful shutdown releases the lease: the other replica leads long before the lease would expire', { timeout: 120_000 }, async () => {
  const lease = 'graceful-test';
  const b = inProcessManager(lease, 'replica-b');
  b.manager.start();
  await waitFor('b leads', () => b.manager.isLeader(), { timeoutMs: 30_000 });
  const c = replica(lease, 'replica-c');
  await waitFor('c is campaigning', () => c.lines.some((l) => l.startsWith('STARTED')), { timeoutMs: 30_000 });
  // Let c see the lease held at least once.
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(c.leadingSince(), undefined);

  const stoppingAt = Date.now();
  await b.manager.stop();
  assert.equal(await b.manager.done, 'stopped');
  assert.notEqual(await holder(lease), 'replica-b', 'released as it stopped');
  const since = await waitFor('c leads', () => c.leadingSince(), { timeoutMs: 12_000, intervalMs: 50 });
  const takeover = since - stoppingAt;
  process.stderr.write(`takeover after a graceful stop: ${takeover} ms\n`);
  // One retry period (2 s) and a few requests; waiting for the 15-s lease to expire would take 13 s or more.
  assert.ok(takeover < 10_000, `took over after ${takeover} ms`);
  assert.deepEqual(b.events, ['leading', 'not-leading']);

  // And c, stopped gracefully in turn, releases too.
  c.child.kill('SIGTERM');
  await waitFor('c stopped', () => c.lines.includes('STOPPED stopped'), { timeoutMs: 20_000 });
  assert.equal(await holder(lease), undefined, 'released: no holder');
});

it(
  'a leader that loses its lease stops its controllers, campaigns again, and leads again once the lease is free',
  { timeout: 120_000 },
  async () => {
    const lease = 'lost-test';
    const reconciled: string[] = [];
    const { manager, events } = inProcessManager(lease, 'replica-d');
    const informer: Informer<KubeObject> = manager.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns });
    const controller = manager.addController({
      name: 'lease-test',
      for: informer,
      resyncPeriodMs: 0,
      reconciler: { reconcile: async (key) => void reconciled.push(key) },
    });
    manager.start();
    await waitFor('d leads', () => manager.isLeader(), { timeoutMs: 30_000 });
    await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before-loss', namespace: ns } });
    await waitFor('reconciled while leading', () => reconciled.includes(`${ns}/before-loss`));

    // Another party takes the lease over (as if d had been partitioned away long enough).
    const current = await client.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', namespace: ns, name: lease });
    const now = formatMicroTime(new Date());
    await client.replace({
      ...current,
      spec: { ...(current.spec as object), holderIdentity: 'usurper', acquireTime: now, renewTime: now },
    });

    await waitFor('d stops leading', () => !manager.isLeader(), { timeoutMs: 30_000 });
    assert.deepEqual(events, ['leading', 'not-leading']);
    await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-loss', namespace: ns } });
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(!reconciled.includes(`${ns}/after-loss`), 'no reconcile after losing the lease');
    assert.equal(controller.queueDepth(), 0);
    assert.equal(await holder(lease), 'usurper', "a replica that lost the lease does not release someone else's");

    // The usurper never renews: once its lease has expired (15 s), d takes it and its controllers start again.
    const lostAt = Date.now();
    await waitFor('d leads again', () => manager.isLeader(), { timeoutMs: 40_000, intervalMs: 100 });
    assert.ok(Date.now() - lostAt >= 10_000, "not before the usurper's lease expired");
    await waitFor('what changed meanwhile is reconciled', () => reconciled.includes(`${ns}/after-loss`), { timeoutMs: 10_000 });
    assert.deepEqual(events, ['leading', 'not-leading', 'leading']);
    assert.equal(await holder(lease), 'replica-d');
    await manager.stop();
    assert.equal(await manager.done, 'stopped');
  },
);
