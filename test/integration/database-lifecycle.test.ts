// The Database controller on the seed `myapp-db`, run through its registration function by a
// Manager on a fresh identity: `replicas: 3` becomes a primary and 2 replicas that turn Ready with
// the endpoint, `myapp-db` reaching only the primary and `myapp-db-ro` only the replicas (the
// EndpointSlices Kubernetes makes of them), status naming the primary and counting the streaming
// replicas; a credentials Secret created once (same password after reconciles, a deleted pod and
// a restarted controller; one create in the audit log, never a rewrite), zero writes when
// unchanged, 3 → 2 removing a replica and never the primary, 2 → 5, a version change rolled out,
// and nothing left after deletion. (Whether the replicas replicate is
// database-replication-postgresql.test.ts: here the node simulator makes every pod Ready.)
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
  primary?: string;
  streamingReplicas?: number;
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
  return waitFor(
    `myapp-db Ready with ${replicas} replicas`,
    async () => {
      const { generation, status: s } = await status();
      const ready = s.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return s.phase === 'Ready' && ready && s.readyReplicas === replicas && s.observedGeneration === generation ? s : undefined;
    },
    { timeoutMs },
  );
}

async function password(): Promise<string> {
  const secret = await admin.get(ref('v1', 'Secret', 'myapp-db-credentials'));
  return Buffer.from((secret.data as Record<string, string>).password!, 'base64').toString('utf8');
}

const statefulSet = () => admin.get(ref('apps/v1', 'StatefulSet', 'myapp-db'));
const replicaCount = async (name: string) => ((await admin.get(ref('apps/v1', 'StatefulSet', name))).spec as { replicas: number }).replicas;

/** The pods a Service reaches: the ready endpoints of its EndpointSlices, by pod name. */
async function reached(service: string): Promise<string[]> {
  type Slice = { endpoints?: { targetRef?: { name: string }; conditions?: { ready?: boolean } }[] };
  const { items } = await admin.list(
    { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' },
    {
      namespace: ns,
      labelSelector: `kubernetes.io/service-name=${service}`,
    },
  );
  const endpoints = items.flatMap((slice) => (slice as Slice).endpoints ?? []);
  return endpoints
    .filter((e) => e.conditions?.ready)
    .map((e) => e.targetRef!.name)
    .sort();
}

async function waitForReached(service: string, pods: string[]): Promise<void> {
  await waitFor(
    `${service} reaching ${pods.join(', ')}`,
    async () => {
      const now = await reached(service);
      return JSON.stringify(now) === JSON.stringify(pods) || undefined;
    },
    { timeoutMs: 30_000 },
  );
}

const podUid = async (name: string) => (await admin.get(ref('v1', 'Pod', name))).metadata.uid;

it('runs the seed Database: Ready with its endpoint, credentials created once, scaled, upgraded, and gone with it', async (t) => {
  const { database } = seedExamples();
  const mark = cluster.audit.mark();
  const started = performance.now();
  await admin.create({ ...database, metadata: { ...database.metadata, namespace: ns } } as unknown as KubeObject);

  const ready = await waitForReady(3);
  t.diagnostic(`seed Database Ready with 3 replicas after ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(ready.endpoint, `myapp-db.${ns}.svc.cluster.local`);
  assert.equal(ready.secretName, 'myapp-db-credentials');
  assert.deepEqual([ready.primary, ready.streamingReplicas], ['myapp-db-0', 2]);
  // One primary, two replicas: <name> reaches the primary only, <name>-ro the replicas only.
  assert.deepEqual([await replicaCount('myapp-db'), await replicaCount('myapp-db-replica')], [1, 2]);
  await waitForReached('myapp-db', ['myapp-db-0']);
  await waitForReached('myapp-db-ro', ['myapp-db-replica-0', 'myapp-db-replica-1']);
  await waitForReached('myapp-db-headless', ['myapp-db-0', 'myapp-db-replica-0', 'myapp-db-replica-1']);
  const replicaPod = await admin.get(ref('v1', 'Pod', 'myapp-db-replica-0'));
  const replicaSpec = replicaPod.spec as { initContainers: { name: string }[]; containers: { env: { name: string; value?: string }[] }[] };
  assert.deepEqual(
    replicaSpec.initContainers.map((c) => c.name),
    ['base-backup'],
  );
  assert.equal(replicaSpec.containers[0]!.env.find((e) => e.name === 'PRIMARY_HOST')?.value, 'myapp-db-0.myapp-db-headless');
  await admin.get(ref('v1', 'ConfigMap', 'myapp-db-replication'));

  const sts = await statefulSet();
  const stsSpec = sts.spec as {
    replicas: number;
    serviceName: string;
    persistentVolumeClaimRetentionPolicy: { whenDeleted: string };
    template: { spec: { containers: { image: string; readinessProbe: { exec: { command: string[] } } }[] } };
    volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[];
  };
  assert.equal(stsSpec.replicas, 1);
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
  const data = Object.fromEntries(
    Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
  assert.deepEqual(Object.keys(data).sort(), [
    'database',
    'host',
    'password',
    'port',
    'replication-password',
    'replication-username',
    'uri',
    'username',
  ]);
  assert.ok(data['replication-password']!.length >= 32 && data['replication-password'] !== data.password, 'a password of its own');
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
  assert.deepEqual(
    cluster.audit.writes(idle, { user: me.username }).map((w) => `${w.verb} ${w.requestURI}`),
    [],
    'an unchanged Database is reconciled without writes',
  );
  assert.equal(await password(), first);

  // A deleted owned Service is recreated.
  const client = await admin.get(ref('v1', 'Service', 'myapp-db'));
  await admin.delete(ref('v1', 'Service', 'myapp-db'));
  await waitFor(
    'the client Service recreated',
    async () => {
      const svc = await admin.get(ref('v1', 'Service', 'myapp-db')).catch(() => undefined);
      return svc && svc.metadata.uid !== client.metadata.uid;
    },
    { timeoutMs: 15_000 },
  );

  // A deleted pod comes back; the password does not change.
  const pod = await admin.get(ref('v1', 'Pod', 'myapp-db-0'));
  await admin.delete(ref('v1', 'Pod', 'myapp-db-0'));
  await waitFor(
    'the pod recreated',
    async () => {
      const p = await admin.get(ref('v1', 'Pod', 'myapp-db-0')).catch(() => undefined);
      return p && p.metadata.uid !== pod.metadata.uid;
    },
    { timeoutMs: 30_000 },
  );
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
  assert.deepEqual(
    secretWrites.map((w) => w.verb),
    ['create'],
  );

  // replicas 3 → 2 removes a replica (the last, myapp-db-replica-1), never the primary.
  const primaryUid = await podUid('myapp-db-0');
  const keptUid = await podUid('myapp-db-replica-0');
  await admin.patch(databaseRef(), 'merge', { spec: { replicas: 2 } });
  await waitFor('myapp-db-replica-1 gone', async () => !(await admin.get(ref('v1', 'Pod', 'myapp-db-replica-1')).catch(() => undefined)), {
    timeoutMs: 30_000,
  });
  const two = await waitForReady(2);
  assert.deepEqual([two.primary, two.streamingReplicas], ['myapp-db-0', 1]);
  assert.deepEqual([await podUid('myapp-db-0'), await podUid('myapp-db-replica-0')], [primaryUid, keptUid], 'the others untouched');
  assert.deepEqual([await replicaCount('myapp-db'), await replicaCount('myapp-db-replica')], [1, 1]);
  await waitForReached('myapp-db', ['myapp-db-0']);
  await waitForReached('myapp-db-ro', ['myapp-db-replica-0']);

  // replicas 2 → 5 adds replicas.
  await admin.patch(databaseRef(), 'merge', { spec: { replicas: 5 } });
  const scaledAt = performance.now();
  const five = await waitForReady(5);
  t.diagnostic(`scaled 2 → 5 and Ready after ${(performance.now() - scaledAt).toFixed(0)} ms`);
  assert.deepEqual([await replicaCount('myapp-db'), await replicaCount('myapp-db-replica'), five.streamingReplicas], [1, 4, 4]);
  assert.equal(await podUid('myapp-db-0'), primaryUid, 'the primary untouched');

  // A version change rolls the StatefulSet to the new image.
  await admin.patch(databaseRef(), 'merge', { spec: { version: '17' } });
  await waitFor(
    'postgres:17 rolled out',
    async () => {
      const sets = await Promise.all(['myapp-db', 'myapp-db-replica'].map((name) => admin.get(ref('apps/v1', 'StatefulSet', name))));
      return sets.every((s) => {
        const st = s.status as { currentRevision?: string; updateRevision?: string; readyReplicas?: number };
        const spec = s.spec as typeof stsSpec;
        return (
          spec.template.spec.containers[0]!.image === 'postgres:17' &&
          st.currentRevision === st.updateRevision &&
          st.readyReplicas === spec.replicas
        );
      });
    },
    { timeoutMs: 90_000 },
  );
  await waitForReady(5);
  assert.equal(await password(), first, 'an upgrade keeps the credentials');

  // Deleting the Database takes everything with it, claims included.
  const claims = await admin.list({ apiVersion: 'v1', kind: 'PersistentVolumeClaim' }, { namespace: ns });
  assert.equal(claims.items.length, 5, 'one claim per replica');
  const deletedAt = performance.now();
  await admin.delete(databaseRef());
  await waitFor(
    'no StatefulSet, Service, ConfigMap, Secret or claim left',
    async () => {
      const left: string[] = [];
      const kinds = [
        ['apps/v1', 'StatefulSet'],
        ['v1', 'Service'],
        ['v1', 'ConfigMap'],
        ['v1', 'Secret'],
        ['v1', 'PersistentVolumeClaim'],
      ] as const;
      for (const [apiVersion, kind] of kinds) {
        const { items } = await admin.list({ apiVersion, kind }, { namespace: ns, labelSelector: 'mycompany.com/database' });
        left.push(...items.map((i) => `${kind}/${i.metadata.name}`));
      }
      if (left.length > 0) throw new Error(`still there: ${left.join(', ')}`);
      return true;
    },
    { timeoutMs: 90_000 },
  );
  t.diagnostic(`everything gone ${(performance.now() - deletedAt).toFixed(0)} ms after deleting the Database`);
});
