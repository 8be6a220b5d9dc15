// Issue 24: one status write per phase a user can see. An Algorithm's first deploy (replicas 1,
// as a preview's), its writes counted in the control plane's audit log: a Deployment available
// within the progress interval writes the Algorithm's status once — Running, as soon as the
// Deployment is available — and no Event; a rollout that outlasts the interval shows Progressing
// after it, not before, and Running when it is done.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeClient, Manager, silentLogger, type KubeObject, type Logger } from '../../src/kube/index.js';
import { registerAlgorithmController } from '../../src/controllers/algorithm-controller.js';
import type { AlgorithmStatus } from '../../constructs/api-types.js';
import type { AuditEvent } from '../cluster/audit-log.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const intervalMs = 10_000;

let cluster: TestCluster;
let admin: KubeClient;
let me: Identity;
let manager: Manager;
let ns: string;

const logger: Logger = {
  ...silentLogger,
  error: (fields, message) => process.stderr.write(`controller error: ${message} ${JSON.stringify(fields)}\n`),
};

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  me = await newIdentity(cluster, 'algorithm-status-writes');
  ns = uniqueName('algo-writes');
  await createNamespace(cluster.kubeConfig, ns);
  manager = new Manager({ client: new KubeClient(me.kubeConfig), leaderElection: false, logger });
  registerAlgorithmController(manager, { namespace: ns, logger, progressIntervalMs: intervalMs });
  manager.start();
});

after(async () => {
  await manager?.stop();
  manager?.client.close();
  admin?.close();
});

const algorithmRef = (name: string) => ({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: ns, name });

async function createAlgorithm(name: string): Promise<void> {
  const spec = { image: 'registry.alien6.io/algo/small:1.0.0', replicas: 1 };
  await admin.create({ ...algorithmRef(name), metadata: { name, namespace: ns }, spec } as unknown as KubeObject);
}

async function waitForPhase(name: string, phase: string, timeoutMs = 30_000): Promise<AlgorithmStatus> {
  return waitFor(
    `${name} ${phase}`,
    async () => {
      const status = (await admin.get(algorithmRef(name))).status as AlgorithmStatus | undefined;
      return status?.phase === phase ? status : undefined;
    },
    { timeoutMs },
  );
}

/** The controller's status writes of one Algorithm, and its Events, since `mark`. */
async function writesSince(mark: number, name: string): Promise<{ status: AuditEvent[]; events: AuditEvent[] }> {
  await cluster.audit.settle();
  const ours = cluster.audit.writes(mark, { user: me.username, namespace: ns });
  return {
    status: ours.filter((w) => w.objectRef?.resource === 'algorithms' && w.objectRef.subresource === 'status' && w.objectRef.name === name),
    events: ours.filter((w) => w.objectRef?.resource === 'events'),
  };
}

const millisAfter = (write: AuditEvent, time: string | undefined) => Date.parse(write.requestReceivedTimestamp) - Date.parse(time ?? '');

it('a first deploy available within the progress interval writes its status once, Running, and no Event', async (t) => {
  const mark = cluster.audit.mark();
  const created = new Date().toISOString();
  await createAlgorithm('fast');
  const running = await waitForPhase('fast', 'Running');
  assert.equal(running.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.equal(running.readyReplicas, 1);
  const deployment = await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'fast' });
  // Past the end of the interval, when progress that had waited would have been written.
  await sleep(intervalMs + 2000);
  const { status, events } = await writesSince(mark, 'fast');
  const ran = status[0] ? millisAfter(status[0], created) : NaN;
  t.diagnostic(`status writes: ${status.length}; Running written ${ran} ms after the create`);
  assert.ok(ran < intervalMs, `the Deployment was available within the interval (Running written ${ran} ms after the create)`);
  assert.equal(status.length, 1, 'one status write: Running (no Pending, no Progressing)');
  assert.deepEqual(
    events.map((e) => e.requestURI),
    [],
    'no Event for a routine first deploy',
  );
  assert.equal(deployment.metadata.ownerReferences?.[0]?.name, 'fast');
});

it('a rollout that outlasts the progress interval shows Progressing after it, not before, then Running', async (t) => {
  // No pod may run in the namespace: the Deployment cannot become available until the quota goes.
  const quota = { apiVersion: 'v1', kind: 'ResourceQuota', namespace: ns, name: 'no-pods' };
  await admin.create({ ...quota, metadata: { name: quota.name, namespace: ns }, spec: { hard: { pods: '0' } } } as KubeObject);
  await waitFor(
    'the quota in force',
    async () => ((await admin.get(quota)).status as { hard?: Record<string, string> } | undefined)?.hard?.pods === '0',
    { timeoutMs: 30_000 },
  );
  const mark = cluster.audit.mark();
  await createAlgorithm('slow');
  const progressing = await waitForPhase('slow', 'Progressing');
  assert.deepEqual(
    ['Ready', 'Progressing'].map((type) => progressing.conditions?.find((c) => c.type === type)?.reason),
    ['RollingOut', 'RollingUpdate'],
  );
  const deployment = await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'slow' });
  const first = await writesSince(mark, 'slow');
  assert.equal(first.status.length, 1, 'Progressing is the first status write');
  // creationTimestamp is cut to the second: the Deployment was created within the second it names.
  const waited = millisAfter(first.status[0]!, deployment.metadata.creationTimestamp);
  t.diagnostic(`Progressing written ${waited} ms after the Deployment's creation second`);
  assert.ok(waited >= intervalMs, `Progressing waited the interval (${waited} ms after the Deployment was created)`);

  await admin.delete(quota);
  await waitForPhase('slow', 'Running', 90_000);
  const done = await writesSince(mark, 'slow');
  assert.equal(done.status.length, 2, 'Progressing, then Running');
  assert.deepEqual(
    done.events.map((e) => e.requestURI),
    [],
    'no Event',
  );
});
