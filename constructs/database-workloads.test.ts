import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import {
  controllerReference,
  databaseEndpoint,
  databaseObjectNames,
  renderDatabaseWorkloads,
  type DatabaseInput,
  type Manifest,
} from './index.js';

// The seed `myapp-db`.
const seed: DatabaseInput = {
  metadata: { name: 'myapp-db', namespace: 'team-a', uid: '0b6c7d8e-0000-4000-8000-000000000002' },
  spec: { engine: 'postgresql', version: '16', storage: '100Gi', replicas: 3 },
};

function find(objects: Manifest[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

const selector = { 'mycompany.com/database': 'myapp-db' };

describe('renderDatabaseWorkloads', () => {
  const objects = renderDatabaseWorkloads(seed);

  it('renders Services for the pods, the primary and the replicas, the replication ConfigMap and two StatefulSets', () => {
    assert.deepEqual(
      objects.map((o) => `${o.apiVersion} ${o.kind} ${o.metadata.name}`),
      [
        'v1 Service myapp-db-headless',
        'v1 Service myapp-db',
        'v1 Service myapp-db-ro',
        'v1 ConfigMap myapp-db-replication',
        'apps/v1 StatefulSet myapp-db',
        'apps/v1 StatefulSet myapp-db-replica',
      ],
    );
    for (const object of objects) {
      assert.equal(object.metadata.namespace, 'team-a');
      assert.deepEqual(object.metadata.labels, {
        'app.kubernetes.io/name': 'postgresql',
        'app.kubernetes.io/instance': 'myapp-db',
        'app.kubernetes.io/version': '16',
        'app.kubernetes.io/component': 'database',
        'app.kubernetes.io/managed-by': 'preview-operator',
        'mycompany.com/database': 'myapp-db',
      });
    }
    assert.deepEqual(databaseObjectNames('myapp-db'), {
      statefulSet: 'myapp-db',
      service: 'myapp-db',
      headlessService: 'myapp-db-headless',
      credentialsSecret: 'myapp-db-credentials',
      replicaStatefulSet: 'myapp-db-replica',
      readOnlyService: 'myapp-db-ro',
      configMap: 'myapp-db-replication',
    });
    assert.equal(databaseEndpoint('myapp-db', 'team-a'), 'myapp-db.team-a.svc.cluster.local');
  });

  it('serves port 5432: the primary through <name>, the replicas through <name>-ro, every pod by a stable name', () => {
    const port = [{ name: 'postgresql', port: 5432, targetPort: 'postgresql', protocol: 'TCP' }];
    const role = 'mycompany.com/database-role';
    assert.deepEqual(find(objects, 'Service', 'myapp-db').spec, {
      type: 'ClusterIP',
      selector: { ...selector, [role]: 'primary' },
      ports: port,
    });
    assert.deepEqual(find(objects, 'Service', 'myapp-db-ro').spec, {
      type: 'ClusterIP',
      selector: { ...selector, [role]: 'replica' },
      ports: port,
    });
    assert.equal(find(objects, 'StatefulSet', 'myapp-db').spec.template.metadata.labels[role], 'primary');
    assert.equal(find(objects, 'StatefulSet', 'myapp-db-replica').spec.template.metadata.labels[role], 'replica');
    assert.deepEqual(find(objects, 'Service', 'myapp-db-headless').spec, {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector,
      ports: port,
    });
  });

  it('runs a primary and 2 replicas of postgres:16 with a 100Gi claim each, deleted with the StatefulSet and on scale-down', () => {
    const sts = find(objects, 'StatefulSet', 'myapp-db');
    assert.equal(sts.spec.replicas, 1);
    const replicas = find(objects, 'StatefulSet', 'myapp-db-replica');
    assert.equal(replicas.spec.replicas, 2);
    assert.equal(replicas.spec.podManagementPolicy, 'Parallel');
    assert.deepEqual(replicas.spec.selector, { matchLabels: { ...selector, 'mycompany.com/database-role': 'replica' } });
    assert.deepEqual(replicas.spec.volumeClaimTemplates, sts.spec.volumeClaimTemplates);
    assert.equal(sts.spec.serviceName, 'myapp-db-headless');
    assert.deepEqual(sts.spec.selector, { matchLabels: selector });
    assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Delete', whenScaled: 'Delete' });
    assert.deepEqual(sts.spec.volumeClaimTemplates, [
      {
        metadata: { name: 'data', labels: selector },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100Gi' } } },
      },
    ]);
    const pod = sts.spec.template;
    assert.equal(pod.metadata.labels['mycompany.com/database'], 'myapp-db');
    const [container] = pod.spec.containers;
    assert.equal(container.image, 'postgres:16');
    assert.deepEqual(container.ports, [{ name: 'postgresql', containerPort: 5432, protocol: 'TCP' }]);
    assert.deepEqual(container.resources, { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } });
    assert.deepEqual(container.volumeMounts, [
      { name: 'data', mountPath: '/var/lib/postgresql' },
      { name: 'run', mountPath: '/var/run/postgresql' },
      { name: 'tmp', mountPath: '/tmp' },
      { name: 'replication', mountPath: '/etc/preview-replication', readOnly: true },
      { name: 'initdb', mountPath: '/docker-entrypoint-initdb.d', readOnly: true },
    ]);
    assert.deepEqual(container.args, ['-c', 'hba_file=/etc/preview-replication/pg_hba.conf', '-c', 'wal_keep_size=256MB']);
  });

  it('takes its credentials from the <name>-credentials Secret and keeps PGDATA below the mount', () => {
    const env = find(objects, 'StatefulSet', 'myapp-db').spec.template.spec.containers[0].env;
    assert.deepEqual(env, [
      { name: 'POSTGRES_USER', valueFrom: { secretKeyRef: { name: 'myapp-db-credentials', key: 'username' } } },
      { name: 'POSTGRES_PASSWORD', valueFrom: { secretKeyRef: { name: 'myapp-db-credentials', key: 'password' } } },
      { name: 'POSTGRES_DB', valueFrom: { secretKeyRef: { name: 'myapp-db-credentials', key: 'database' } } },
      { name: 'PGDATA', value: '/var/lib/postgresql/data' },
      {
        name: 'REPLICATION_USER',
        valueFrom: { secretKeyRef: { name: 'myapp-db-credentials', key: 'replication-username', optional: true } },
      },
      {
        name: 'REPLICATION_PASSWORD',
        valueFrom: { secretKeyRef: { name: 'myapp-db-credentials', key: 'replication-password', optional: true } },
      },
    ]);
    const replicaEnv = find(objects, 'StatefulSet', 'myapp-db-replica').spec.template.spec.containers[0].env;
    assert.deepEqual(replicaEnv.slice(-2), [
      { name: 'PRIMARY_HOST', value: 'myapp-db-0.myapp-db-headless' },
      { name: 'PRIMARY_PORT', value: '5432' },
    ]);
  });

  it('is ready when pg_isready answers over TCP; a replica when it streams from the primary', () => {
    const probe = find(objects, 'StatefulSet', 'myapp-db').spec.template.spec.containers[0].readinessProbe;
    assert.deepEqual(probe, {
      exec: { command: ['sh', '-c', 'exec pg_isready -U "$POSTGRES_USER" -d "$POSTGRES_DB" -h 127.0.0.1 -p 5432'] },
      initialDelaySeconds: 5,
      periodSeconds: 5,
      timeoutSeconds: 3,
      failureThreshold: 6,
    });
    const replica = find(objects, 'StatefulSet', 'myapp-db-replica').spec.template.spec;
    assert.deepEqual(replica.containers[0].readinessProbe.exec.command, ['sh', '/etc/preview-replication/postgresql-replica-ready.sh']);
    assert.deepEqual(
      replica.initContainers.map((c: { name: string; image: string; command: string[] }) => [c.name, c.image, c.command]),
      [['base-backup', 'postgres:16', ['sh', '/etc/preview-replication/postgresql-replica-init.sh']]],
    );
  });

  it("scales the replicas only: the primary's StatefulSet is the same at 1, 2 and 5 servers", () => {
    const render = (replicas: number) => renderDatabaseWorkloads({ ...seed, spec: { ...seed.spec, replicas } });
    const primaryAt = (replicas: number) => stringify(find(render(replicas), 'StatefulSet', 'myapp-db'));
    assert.equal(primaryAt(1), primaryAt(2));
    assert.equal(primaryAt(5), primaryAt(2));
    assert.equal(find(render(5), 'StatefulSet', 'myapp-db-replica').spec.replicas, 4);
    const single = render(1).map((o) => `${o.kind}/${o.metadata.name}`);
    assert.deepEqual(single, ['Service/myapp-db-headless', 'Service/myapp-db', 'ConfigMap/myapp-db-replication', 'StatefulSet/myapp-db']);
  });

  it("keeps a long name's replica StatefulSet within 52 characters, distinct per name", () => {
    const long = 'a'.repeat(50);
    const name = databaseObjectNames(long).replicaStatefulSet;
    assert.equal(name.length, 52);
    assert.match(name, /^a{37}-[0-9a-f]{6}-replica$/);
    assert.notEqual(databaseObjectNames(`${'a'.repeat(49)}b`).replicaStatefulSet, name);
    assert.equal(databaseObjectNames('a'.repeat(44)).replicaStatefulSet, `${'a'.repeat(44)}-replica`);
  });

  it("meets Pod Security restricted as the official images' uid 999", () => {
    const pod = find(objects, 'StatefulSet', 'myapp-db').spec.template.spec;
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(pod.containers[0].securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
    });
    assert.deepEqual(pod.volumes, [
      { name: 'run', emptyDir: {} },
      { name: 'tmp', emptyDir: {} },
      { name: 'replication', configMap: { name: 'myapp-db-replication' } },
      {
        name: 'initdb',
        configMap: { name: 'myapp-db-replication', items: [{ key: 'postgresql-primary-init.sh', path: 'postgresql-primary-init.sh' }] },
      },
    ]);
    const replica = find(objects, 'StatefulSet', 'myapp-db-replica').spec.template.spec;
    for (const container of [...replica.initContainers, ...replica.containers]) {
      assert.deepEqual(container.securityContext, pod.containers[0].securityContext);
    }
  });

  it('renders MySQL from mysql:<version> on 3306 with its own probe, env and data directory', () => {
    const mysql = renderDatabaseWorkloads({
      metadata: { name: 'orders', namespace: 'team-a' },
      spec: { engine: 'mysql', version: '8.4', storage: '10Gi' },
    });
    const sts = find(mysql, 'StatefulSet', 'orders');
    const container = sts.spec.template.spec.containers[0];
    assert.equal(sts.spec.replicas, 1);
    assert.equal(container.image, 'mysql:8.4');
    assert.deepEqual(container.args, [
      '--datadir=/var/lib/mysql/data',
      '--server-id=1',
      '--gtid-mode=ON',
      '--enforce-gtid-consistency=ON',
      '--log-bin=binlog',
    ]);
    assert.deepEqual(container.ports, [{ name: 'mysql', containerPort: 3306, protocol: 'TCP' }]);
    assert.deepEqual(container.readinessProbe.exec.command, ['sh', '-c', 'exec mysqladmin ping -h 127.0.0.1 -P 3306 --silent']);
    assert.deepEqual(
      container.env.map((e: { name: string }) => e.name),
      ['MYSQL_USER', 'MYSQL_PASSWORD', 'MYSQL_DATABASE', 'MYSQL_ROOT_PASSWORD', 'REPLICATION_USER', 'REPLICATION_PASSWORD'],
    );
    assert.deepEqual(
      container.volumeMounts.map((m: { mountPath: string }) => m.mountPath),
      ['/var/lib/mysql', '/var/run/mysqld', '/tmp', '/etc/preview-replication', '/docker-entrypoint-initdb.d'],
    );
    assert.equal(mysql.filter((o) => o.kind === 'StatefulSet').length, 1);
    assert.equal(find(mysql, 'Service', 'orders').spec.ports[0].port, 3306);
    assert.equal(find(mysql, 'Service', 'orders').metadata.labels['app.kubernetes.io/name'], 'mysql');
  });

  it('applies options and owner references', () => {
    const owner = controllerReference({
      apiVersion: 'mycompany.com/v1',
      kind: 'Database',
      metadata: { name: 'myapp-db', uid: seed.metadata.uid! },
    });
    const custom = renderDatabaseWorkloads(seed, {
      image: 'registry.internal/postgres:16.4',
      storageClassName: 'fast',
      resources: { requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '2', memory: '4Gi' } },
      ownerReferences: [owner],
    });
    const sts = find(custom, 'StatefulSet', 'myapp-db');
    assert.equal(sts.spec.template.spec.containers[0].image, 'registry.internal/postgres:16.4');
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.storageClassName, 'fast');
    assert.deepEqual(sts.spec.template.spec.containers[0].resources.limits, { cpu: '2', memory: '4Gi' });
    for (const object of custom) assert.deepEqual(object.metadata.ownerReferences, [owner]);
  });

  it('is deterministic: rendering twice gives byte-identical YAML', () => {
    const render = () =>
      renderDatabaseWorkloads(structuredClone(seed))
        .map((o) => stringify(o))
        .join('---\n');
    assert.equal(render(), render());
  });
});
