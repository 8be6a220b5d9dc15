// The Database controller on the seed `myapp-db`, run through its registration function by a
// Manager on a fresh identity: a StatefulSet of 3 that becomes Ready with its endpoint, a
// credentials Secret created once (same password after reconciles, a deleted pod and a
// restarted controller; one create in the audit log, never a rewrite), zero writes when
// unchanged, scaling 3 → 5, a version change rolled out, and nothing left after deletion.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeClient, Manager, silentLogger, type KubeObject, type Logger } from '../../src/kube/index.js';
import { registerDatabaseController } from '../../src/controllers/database-controller.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { seedExamples } from '../fixtures/crds/seed-examples.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let admin: KubeClient;
let me: Identity;
let ns: string;
let manager: Manager | undefined;
const reconciles: number[] = [];

const logger: Logger = {
  ...silentLogger,
  debug: (fields) => {
    if ((fields as { key?: string }).key === `${ns}/myapp-db`) reconciles.push(Date.now());
  },
  error: (fields, message) => process.stderr.write(`controller error: ${message} ${JSON.stringify(fields)}\n`),
};

function startOperator(): Manager {
  const m = new Manager({ client: new KubeClient(me.kubeConfig), leaderElection: false, logger });
  registerDatabaseController(m, { namespace: ns, logger, resyncPeriodMs: 500 });
  m.start();
  return m;
}

async function stopOperator(): Promise<void> {
  await manager?.stop();
  manager?.client.close();
  manager = undefined;
}

before(async () => {
  cluster = await testCluster();
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'test-admin' });
  me = await newIdentity(cluster, 'database-lifecycle');
  ns = uniqueName('db-life');
  await createNamespace(cluster.kubeConfig, ns);
  manager = startOperator();
});

after(async () => {
  await stopOperator();
  admin?.close();
});

const ref = (apiVersion: string, kind: string, name: string) => ({ apiVersion, kind, namespace: ns, name });
const databaseRef = () => ref('mycompany.com/v1', 'Database', 'myapp-db');

interface DbStatus {
  phase?: string;
  readyReplicas?: number;
  endpoint?: string;
  secretName?: string;
  observedGeneration?: number;
  conditions?: { type: string; status: string; reason: string }[];
}

async function status(): Promise<{ generation?: number; status: DbStatus }> {
  const db = await admin.get(databaseRef());
  return { generation: db.metadata.generation, status: (db.status ?? {}) as DbStatus };
}

async function waitForReady(replicas: number, timeoutMs = 90_000): Promise<DbStatus> {
  return waitFor(`myapp-db Ready with ${replicas} replicas`, async () => {
    const { generation, status: s } = await status();
    const ready = s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    return s.phase === 'Ready' && ready && s.readyReplicas === replicas && s.observedGeneration === generation ? s : undefined;
  }, { timeoutMs });
}

async function password(): Promise<string> {
  const secret = await admin.get(ref('v1', 'Secret', 'myapp-db-credentials'));
  return Buffer.from((secret.data as Record<string, string>).password!, 'base64').toString('utf8');
}

const statefulSet = () => admin.get(ref('apps/v1', 'StatefulSet', 'myapp-db'));

it('runs the seed Database: Ready with its endpoint, credentials created once, scaled, upgraded, and gone with it', async (t) => {
  const { database } = seedExamples();
  const mark = cluster.audit.mark();
  const started = performance.now();
  await admin.create({ ...database, metadata: { ...database.metadata, namespace: ns } } as unknown as KubeObject);

  const ready = await waitForReady(3);
  t.diagnostic(`seed Database Ready with 3 replicas after ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(ready.endpoint, `myapp-db.${ns}.svc.cluster.local`);
  assert.equal(ready.secretName, 'myapp-db-credentials');

  const sts = await statefulSet();
  const stsSpec = sts.spec as {
    replicas: number; serviceName: string;
    persistentVolumeClaimRetentionPolicy: { whenDeleted: string };
    template: { spec: { containers: { image: string; readinessProbe: { exec: { command: string[] } } }[] } };
    volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[];
  };
  assert.equal(stsSpec.replicas, 3);
  assert.equal(stsSpec.template.spec.containers[0]!.image, 'postgres:16');
  assert.match(stsSpec.template.spec.containers[0]!.readinessProbe.exec.command.join(' '), /pg_isready/);
  assert.equal(stsSpec.volumeClaimTemplates[0]!.spec.resources.requests.storage, '100Gi');
  assert.equal(stsSpec.persistentVolumeClaimRetentionPolicy.whenDeleted, 'Delete');
  assert.equal(stsSpec.serviceName, 'myapp-db-headless');
  const headless = await admin.get(ref('v1', 'Service', 'myapp-db-headless'));
  assert.equal((headless.spec as { clusterIP: string }).clusterIP, 'None');
  await admin.get(ref('v1', 'Service', 'myapp-db'));

  // The credentials.
  const secret = await admin.get(ref('v1', 'Secret', 'myapp-db-credentials'));
  const data = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  assert.deepEqual(Object.keys(data).sort(), ['database', 'host', 'password', 'port', 'uri', 'username']);
  assert.ok(data.password!.length >= 32 && /^[A-Za-z0-9]+$/.test(data.password!), 'a long random password');
  assert.equal(data.host, `myapp-db.${ns}.svc.cluster.local`);
  assert.equal(data.port, '5432');
  assert.equal(data.uri, `postgresql://${data.username}:${data.password}@myapp-db.${ns}.svc.cluster.local:5432/${data.database}`);
  const db = await admin.get(databaseRef());
  assert.equal(secret.metadata.ownerReferences?.[0]?.uid, db.metadata.uid, 'owned by the Database (by uid)');
  const first = data.password!;

  // Three reconciles of an unchanged Database: same password, and no write at all.
  await cluster.audit.settle();
  const idle = cluster.audit.mark();
  const before = reconciles.length;
  await waitFor('three more reconciles', () => reconciles.length >= before + 3, { timeoutMs: 20_000 });
  await cluster.audit.settle();
  assert.deepEqual(cluster.audit.writes(idle, { user: me.username }).map((w) => `${w.verb} ${w.requestURI}`), [], 'an unchanged Database is reconciled without writes');
  assert.equal(await password(), first);

  // A deleted owned Service is recreated.
  const client = await admin.get(ref('v1', 'Service', 'myapp-db'));
  await admin.delete(ref('v1', 'Service', 'myapp-db'));
  await waitFor('the client Service recreated', async () => {
    const svc = await admin.get(ref('v1', 'Service', 'myapp-db')).catch(() => undefined);
    return svc && svc.metadata.uid !== client.metadata.uid;
  }, { timeoutMs: 15_000 });

  // A deleted pod comes back; the password does not change.
  const pod = await admin.get(ref('v1', 'Pod', 'myapp-db-0'));
  await admin.delete(ref('v1', 'Pod', 'myapp-db-0'));
  await waitFor('the pod recreated', async () => {
    const p = await admin.get(ref('v1', 'Pod', 'myapp-db-0')).catch(() => undefined);
    return p && p.metadata.uid !== pod.metadata.uid;
  }, { timeoutMs: 30_000 });
  await waitForReady(3);
  assert.equal(await password(), first);

  // A restarted controller (a new process: empty caches) keeps it too.
  await stopOperator();
  const restartedAt = reconciles.length;
  manager = startOperator();
  await waitFor('a reconcile by the new controller', () => reconciles.length > restartedAt, { timeoutMs: 20_000 });
  await waitForReady(3);
  assert.equal(await password(), first);

  // The Secret was created once and never written again by the operator.
  await cluster.audit.settle();
  const secretWrites = cluster.audit.writes(mark, { user: me.username, resource: 'secrets' });
  assert.deepEqual(secretWrites.map((w) => w.verb), ['create']);

  // replicas 3 → 5 scales the StatefulSet.
  await admin.patch(databaseRef(), 'merge', { spec: { replicas: 5 } });
  const scaledAt = performance.now();
  await waitForReady(5);
  t.diagnostic(`scaled 3 → 5 and Ready after ${(performance.now() - scaledAt).toFixed(0)} ms`);
  assert.equal((await statefulSet()).spec && ((await statefulSet()).spec as { replicas: number }).replicas, 5);

  // A version change rolls the StatefulSet to the new image.
  await admin.patch(databaseRef(), 'merge', { spec: { version: '17' } });
  await waitFor('postgres:17 rolled out', async () => {
    const s = await statefulSet();
    const st = s.status as { currentRevision?: string; updateRevision?: string; readyReplicas?: number };
    return (s.spec as typeof stsSpec).template.spec.containers[0]!.image === 'postgres:17' && st.currentRevision === st.updateRevision && st.readyReplicas === 5;
  }, { timeoutMs: 90_000 });
  await waitForReady(5);
  assert.equal(await password(), first, 'an upgrade keeps the credentials');

  // Deleting the Database takes everything with it, claims included.
  const claims = await admin.list({ apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, { namespace: ns });
  assert.equal(claims.items.length, 5, 'one claim per replica');
  const deletedAt = performance.now();
  await admin.delete(databaseRef());
  await waitFor('no StatefulSet, Service, Secret or claim left', async () => {
    const left: string[] = [];
    for (const [apiVersion, kind] of [['apps/v1', 'StatefulSet'], ['v1', 'Service'], ['v1', 'Secret'], ['v1', 'PersistentVolumeClaim']] as const) {
      const { items } = await admin.list({ apiVersion, kind }, { namespace: ns });
      left.push(...items.filter((i) => kind !== 'Secret' || i.metadata.name === 'myapp-db-credentials').map((i) => `${kind}/${i.metadata.name}`));
    }
    if (left.length > 0) throw new Error(`still there: ${left.join(', ')}`);
    return true;
  }, { timeoutMs: 90_000 });
  t.diagnostic(`everything gone ${(performance.now() - deletedAt).toFixed(0)} ms after deleting the Database`);
});
