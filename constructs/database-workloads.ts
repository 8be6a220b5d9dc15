import { k8s } from 'cdk8s-plus-33';
import type { DatabaseEngine, DatabaseSpec } from './api-types.js';
import type { ContainerResources } from './algorithm-workloads.js';
import type { Manifest, OwnerReference } from './kube-object.js';
import {
  databaseRoleLabel,
  primaryHost,
  replicationConfigPath,
  replicationObjectNames,
  type DatabaseRole,
  type EngineReplication,
  type ReplicationInput,
} from './database-replication.js';
import { mysqlReplication } from './database-replication-mysql.js';
import { postgresqlReplication } from './database-replication-postgresql.js';
import { renderObjects } from './render-objects.js';
import { stableHashOfMap } from './stable-hash.js';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './restricted-security-context.js';

/** The label every object and pod of a database carries: `mycompany.com/database: <name>`. */
export const databaseLabel = 'mycompany.com/database';

/**
 * The uid/gid the official Debian-based images (postgres:<v>, mysql:<v>) create their
 * `postgres`/`mysql` user with. Running as it directly (instead of the entrypoint dropping
 * from root) is what Pod Security `restricted` demands; both entrypoints support it as long
 * as the data and socket directories are writable, which fsGroup 999 and emptyDirs ensure.
 */
export const officialImageUser = 999;

interface EngineFacts {
  /** `app.kubernetes.io/name` and the Service port name. */
  readonly portName: string;
  readonly port: number;
  readonly image: (version: string) => string;
  /** Where the claim is mounted. */
  readonly dataMountPath: string;
  /** Directories the server writes besides its data (read-only root filesystem). */
  readonly scratchDirs: readonly { readonly name: string; readonly path: string }[];
  /** The image's environment; without the application's credentials, the administrator's only. */
  readonly env: (secret: string, applicationCredentials: boolean) => k8s.EnvVar[];
  readonly args: readonly string[];
  readonly readinessCommand: readonly string[];
  readonly replication: (input: ReplicationInput) => EngineReplication;
}

const fromSecret = (secret: string, key: string): k8s.EnvVarSource => ({ secretKeyRef: { name: secret, key } });

const engines: Record<DatabaseEngine, EngineFacts> = {
  postgresql: {
    portName: 'postgresql',
    port: 5432,
    image: (version) => `postgres:${version}`,
    // One mount at /var/lib/postgresql with PGDATA in a subdirectory: the volume root may hold
    // lost+found, and images 18+ refuse a mount at .../data unless PGDATA is set explicitly.
    dataMountPath: '/var/lib/postgresql',
    scratchDirs: [
      { name: 'run', path: '/var/run/postgresql' },
      { name: 'tmp', path: '/tmp' },
    ],
    // The application's user is the image's administrator: a replica keeps it.
    env: (secret) => [
      { name: 'POSTGRES_USER', valueFrom: fromSecret(secret, 'username') },
      { name: 'POSTGRES_PASSWORD', valueFrom: fromSecret(secret, 'password') },
      { name: 'POSTGRES_DB', valueFrom: fromSecret(secret, 'database') },
      { name: 'PGDATA', value: '/var/lib/postgresql/data' },
    ],
    args: [],
    // Over TCP: during initialisation the temporary server listens on the socket only, so
    // the pod turns ready when the real server is up.
    readinessCommand: ['sh', '-c', 'exec pg_isready -U "$POSTGRES_USER" -d "$POSTGRES_DB" -h 127.0.0.1 -p 5432'],
    replication: postgresqlReplication,
  },
  mysql: {
    portName: 'mysql',
    port: 3306,
    image: (version) => `mysql:${version}`,
    dataMountPath: '/var/lib/mysql',
    scratchDirs: [
      { name: 'run', path: '/var/run/mysqld' },
      { name: 'tmp', path: '/tmp' },
    ],
    env: (secret, applicationCredentials) => [
      ...(applicationCredentials
        ? [
            { name: 'MYSQL_USER', valueFrom: fromSecret(secret, 'username') },
            { name: 'MYSQL_PASSWORD', valueFrom: fromSecret(secret, 'password') },
            { name: 'MYSQL_DATABASE', valueFrom: fromSecret(secret, 'database') },
          ]
        : []),
      // The image insists on a root password; the credentials' password keeps it known to
      // whoever may read the Secret, and to nobody else.
      { name: 'MYSQL_ROOT_PASSWORD', valueFrom: fromSecret(secret, 'password') },
    ],
    // A subdirectory, because `mysqld --initialize` refuses a non-empty datadir (lost+found).
    args: ['--datadir=/var/lib/mysql/data'],
    readinessCommand: ['sh', '-c', 'exec mysqladmin ping -h 127.0.0.1 -P 3306 --silent'],
    replication: mysqlReplication,
  },
};

/** Names of what the renderer produces for the database `name`. */
export function databaseObjectNames(name: string) {
  return {
    /** The primary's StatefulSet: one pod, `<name>-0`. */
    statefulSet: name,
    /** The client Service, the primary only; `status.endpoint` is `<name>.<namespace>.svc.cluster.local`. */
    service: name,
    /** With replicas > 1: their StatefulSet `<name>-replica`, the read-only Service `<name>-ro`; and the replication ConfigMap. */
    ...replicationObjectNames(name),
    /** Governs the StatefulSet's stable pod DNS names. */
    headlessService: `${name}-headless`,
    /** Written once by the Database controller: username, password, database, host, port, uri. */
    credentialsSecret: `${name}-credentials`,
  } as const;
}

/** The in-cluster host name of a database's client Service. */
export function databaseEndpoint(name: string, namespace: string): string {
  return `${databaseObjectNames(name).service}.${namespace}.svc.cluster.local`;
}

/** The port the engine listens on (and the client Service exposes). */
export function databasePort(engine: DatabaseEngine): number {
  return engines[engine].port;
}

/** The Database as far as the renderer needs it (plain JSON from the API server will do). */
export interface DatabaseInput {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly uid?: string };
  readonly spec: DatabaseSpec;
}

export interface DatabaseWorkloadOptions {
  /**
   * The image; by default the engine's official image tagged with spec.version.
   * @default `postgres:<version>` or `mysql:<version>`
   */
  readonly image?: string;
  /**
   * StorageClass of the volume claims.
   * @default - the cluster's default StorageClass
   */
  readonly storageClassName?: string;
  /**
   * CPU and memory of the database container.
   * @default { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '1Gi' } }
   */
  readonly resources?: ContainerResources;
  /**
   * Extra labels on every rendered object (not on selectors).
   * @default - none
   */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Owner references set on every rendered object; controllers pass
   * `[controllerReference(database)]`.
   * @default - none
   */
  readonly ownerReferences?: readonly OwnerReference[];
}

const defaultResources = {
  requests: { cpu: '250m', memory: '256Mi' },
  limits: { cpu: '1', memory: '1Gi' },
} as const;

function quantities(values: Readonly<Record<string, string>>): Record<string, k8s.Quantity> {
  const out: Record<string, k8s.Quantity> = {};
  for (const [key, value] of Object.entries(values)) out[key] = k8s.Quantity.fromString(value);
  return out;
}

/** Everything the objects of one database are rendered from. */
interface DatabasePlan {
  readonly name: string;
  readonly namespace?: string;
  readonly spec: DatabaseSpec;
  readonly engine: EngineFacts;
  readonly names: ReturnType<typeof databaseObjectNames>;
  readonly selector: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly replication: EngineReplication;
  readonly options: DatabaseWorkloadOptions;
}

/** The annotation on the pod templates that rolls the pods when the replication ConfigMap changes. */
export const replicationConfigAnnotation = 'mycompany.com/replication-config';

/**
 * Renders the workloads of a Database: the headless Service `<name>-headless` for stable pod
 * names, the client Service `<name>` (the primary), the replication ConfigMap, and the primary's
 * StatefulSet `<name>` of one pod. With replicas N > 1, also N−1 streaming replicas: the StatefulSet
 * `<name>-replica` and the read-only Service `<name>-ro` (database-replication.ts says why two
 * StatefulSets). Volume claims are deleted with their StatefulSet and on scale-down. The
 * credentials Secret is not rendered: it holds random passwords and is created once by the
 * controller. Pure and deterministic; every pod passes Pod Security `restricted`.
 */
export function renderDatabaseWorkloads(database: DatabaseInput, options: DatabaseWorkloadOptions = {}): Manifest[] {
  const plan = databasePlan(database, options);
  const { names, engine, selector } = plan;
  const meta = (objectName: string) => ({ name: objectName, namespace: plan.namespace, labels: plan.labels });
  const ports = [{ name: engine.portName, port: engine.port, targetPort: k8s.IntOrString.fromString(engine.portName), protocol: 'TCP' }];
  const replicated = (plan.spec.replicas ?? 1) > 1;

  return renderObjects((chart) => {
    new k8s.KubeService(chart, 'headless', {
      metadata: meta(names.headlessService),
      // Replicas resolve the primary before it is ready (they wait for it to answer).
      spec: { clusterIp: 'None', publishNotReadyAddresses: true, selector, ports },
    });
    new k8s.KubeService(chart, 'client', {
      metadata: meta(names.service),
      spec: { type: 'ClusterIP', selector: { ...selector, [databaseRoleLabel]: 'primary' }, ports },
    });
    if (replicated) {
      new k8s.KubeService(chart, 'read-only', {
        metadata: meta(names.readOnlyService),
        spec: { type: 'ClusterIP', selector: { ...selector, [databaseRoleLabel]: 'replica' }, ports },
      });
    }
    new k8s.KubeConfigMap(chart, 'replication', { metadata: meta(names.configMap), data: { ...plan.replication.files } });
    new k8s.KubeStatefulSet(chart, 'statefulset', { metadata: meta(names.statefulSet), spec: serverStatefulSet(plan, 'primary') });
    if (replicated) {
      new k8s.KubeStatefulSet(chart, 'replicas', { metadata: meta(names.replicaStatefulSet), spec: serverStatefulSet(plan, 'replica') });
    }
  }, options.ownerReferences);
}

function databasePlan(database: DatabaseInput, options: DatabaseWorkloadOptions): DatabasePlan {
  const { name, namespace } = database.metadata;
  const spec = database.spec;
  const engine = engines[spec.engine];
  const names = databaseObjectNames(name);
  const selector = { [databaseLabel]: name };
  const labels = {
    ...options.labels,
    'app.kubernetes.io/name': engine.portName,
    'app.kubernetes.io/instance': name,
    'app.kubernetes.io/version': spec.version,
    'app.kubernetes.io/component': 'database',
    'app.kubernetes.io/managed-by': 'preview-operator',
    ...selector,
  };
  const replication = engine.replication({
    engine: spec.engine,
    version: spec.version,
    credentialsSecret: names.credentialsSecret,
    primaryHost: primaryHost(name, names.headlessService),
    port: engine.port,
  });
  return { name, namespace, spec, engine, names, selector, labels, replication, options };
}

/**
 * The StatefulSet of one role. The primary's selects the database label alone (a StatefulSet's
 * selector is immutable, and databases made before replication have that one); the StatefulSet
 * controller only counts pods named after the set and controlled by it, so the replicas' pods it
 * also matches are not its own.
 */
function serverStatefulSet(plan: DatabasePlan, role: DatabaseRole): k8s.StatefulSetSpec {
  const { names, engine, selector, spec } = plan;
  const primary = role === 'primary';
  return {
    serviceName: names.headlessService,
    replicas: primary ? 1 : (spec.replicas ?? 1) - 1,
    selector: { matchLabels: primary ? selector : { ...selector, [databaseRoleLabel]: role } },
    // Replicas copy from the primary, not from each other: they can start together.
    podManagementPolicy: primary ? 'OrderedReady' : 'Parallel',
    updateStrategy: { type: 'RollingUpdate' },
    revisionHistoryLimit: 3,
    persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    template: {
      metadata: {
        labels: {
          ...selector,
          [databaseRoleLabel]: role,
          'app.kubernetes.io/name': engine.portName,
          'app.kubernetes.io/instance': plan.name,
        },
        annotations: {
          'kubectl.kubernetes.io/default-container': 'database',
          [replicationConfigAnnotation]: stableHashOfMap(plan.replication.files),
        },
      },
      spec: serverPod(plan, role),
    },
    volumeClaimTemplates: [
      {
        metadata: { name: 'data', labels: selector },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: plan.options.storageClassName,
          resources: { requests: { storage: k8s.Quantity.fromString(spec.storage) } },
        },
      },
    ],
  };
}

/** A server pod of `role`: the engine's image with its role's settings, scripts and readiness. */
function serverPod(plan: DatabasePlan, role: DatabaseRole): k8s.PodSpec {
  const { engine, names, options } = plan;
  const replication = plan.replication[role];
  const image = options.image ?? engine.image(plan.spec.version);
  const env = [...engine.env(names.credentialsSecret, replication.applicationCredentials), ...replication.env];
  const resources = {
    requests: quantities(options.resources?.requests ?? defaultResources.requests),
    limits: quantities(options.resources?.limits ?? defaultResources.limits),
  };
  const initdb = replication.initdbScripts.length > 0;
  const mounts = [
    { name: 'data', mountPath: engine.dataMountPath },
    ...engine.scratchDirs.map((dir) => ({ name: dir.name, mountPath: dir.path })),
    { name: 'replication', mountPath: replicationConfigPath, readOnly: true },
  ];
  const common = { image, imagePullPolicy: 'IfNotPresent', env, resources, securityContext: restrictedContainerSecurityContext(true) };
  const args = [...engine.args, ...replication.args];
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: restrictedPodSecurityContext(officialImageUser),
    terminationGracePeriodSeconds: 30,
    initContainers: replication.initCommand
      ? [{ name: 'base-backup', ...common, command: [...replication.initCommand], volumeMounts: mounts }]
      : undefined,
    containers: [
      {
        name: 'database',
        ...common,
        args: args.length > 0 ? args : undefined,
        ports: [{ name: engine.portName, containerPort: engine.port, protocol: 'TCP' }],
        readinessProbe: {
          exec: { command: [...(replication.readinessCommand ?? engine.readinessCommand)] },
          initialDelaySeconds: 5,
          periodSeconds: 5,
          timeoutSeconds: 3,
          failureThreshold: 6,
        },
        volumeMounts: initdb ? [...mounts, { name: 'initdb', mountPath: '/docker-entrypoint-initdb.d', readOnly: true }] : mounts,
      },
    ],
    volumes: [
      ...engine.scratchDirs.map((dir) => ({ name: dir.name, emptyDir: {} })),
      { name: 'replication', configMap: { name: names.configMap } },
      // Only the role's scripts: the entrypoint runs every *.sh it finds there.
      ...(initdb
        ? [{ name: 'initdb', configMap: { name: names.configMap, items: replication.initdbScripts.map((key) => ({ key, path: key })) } }]
        : []),
    ],
  };
}
