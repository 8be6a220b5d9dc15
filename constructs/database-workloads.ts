import { k8s } from 'cdk8s-plus-33';
import type { DatabaseEngine, DatabaseSpec } from './api-types.js';
import type { ContainerResources } from './algorithm-workloads.js';
import type { Manifest, OwnerReference } from './kube-object.js';
import { renderObjects } from './render-objects.js';
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
  readonly env: (secret: string) => k8s.EnvVar[];
  readonly args: readonly string[];
  readonly readinessCommand: readonly string[];
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
    scratchDirs: [{ name: 'run', path: '/var/run/postgresql' }, { name: 'tmp', path: '/tmp' }],
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
  },
  mysql: {
    portName: 'mysql',
    port: 3306,
    image: (version) => `mysql:${version}`,
    dataMountPath: '/var/lib/mysql',
    scratchDirs: [{ name: 'run', path: '/var/run/mysqld' }, { name: 'tmp', path: '/tmp' }],
    env: (secret) => [
      { name: 'MYSQL_USER', valueFrom: fromSecret(secret, 'username') },
      { name: 'MYSQL_PASSWORD', valueFrom: fromSecret(secret, 'password') },
      { name: 'MYSQL_DATABASE', valueFrom: fromSecret(secret, 'database') },
      // The image insists on a root password; the credentials' password keeps it known to
      // whoever may read the Secret, and to nobody else.
      { name: 'MYSQL_ROOT_PASSWORD', valueFrom: fromSecret(secret, 'password') },
    ],
    // A subdirectory, because `mysqld --initialize` refuses a non-empty datadir (lost+found).
    args: ['--datadir=/var/lib/mysql/data'],
    readinessCommand: ['sh', '-c', 'exec mysqladmin ping -h 127.0.0.1 -P 3306 --silent'],
  },
};

/** Names of what the renderer produces for the database `name`. */
export function databaseObjectNames(name: string) {
  return {
    statefulSet: name,
    /** The client Service; `status.endpoint` is `<name>.<namespace>.svc.cluster.local`. */
    service: name,
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

/**
 * Renders the workloads of a Database: headless Service `<name>-headless`, client Service
 * `<name>` and StatefulSet `<name>` of the engine's official image, with a volume claim
 * template of spec.storage that is deleted with the StatefulSet and on scale-down. The
 * credentials Secret is not rendered: it holds a random password and is created once by
 * the controller. Pure and deterministic; every pod passes Pod Security `restricted`.
 */
export function renderDatabaseWorkloads(database: DatabaseInput, options: DatabaseWorkloadOptions = {}): Manifest[] {
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
  const meta = (objectName: string) => ({ name: objectName, namespace, labels });
  const ports = [{ name: engine.portName, port: engine.port, targetPort: k8s.IntOrString.fromString(engine.portName), protocol: 'TCP' }];

  return renderObjects((chart) => {
    new k8s.KubeService(chart, 'headless', {
      metadata: meta(names.headlessService),
      spec: {
        clusterIp: 'None',
        // Peers resolve each other before they are ready (needed to bootstrap replication).
        publishNotReadyAddresses: true,
        selector,
        ports,
      },
    });
    new k8s.KubeService(chart, 'client', {
      metadata: meta(names.service),
      spec: { type: 'ClusterIP', selector, ports },
    });
    new k8s.KubeStatefulSet(chart, 'statefulset', {
      metadata: meta(names.statefulSet),
      spec: {
        serviceName: names.headlessService,
        replicas: spec.replicas ?? 1,
        selector: { matchLabels: selector },
        podManagementPolicy: 'OrderedReady',
        updateStrategy: { type: 'RollingUpdate' },
        revisionHistoryLimit: 3,
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
        template: {
          metadata: {
            labels: { ...selector, 'app.kubernetes.io/name': engine.portName, 'app.kubernetes.io/instance': name },
            annotations: { 'kubectl.kubernetes.io/default-container': 'database' },
          },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: restrictedPodSecurityContext(officialImageUser),
            terminationGracePeriodSeconds: 30,
            containers: [{
              name: 'database',
              image: options.image ?? engine.image(spec.version),
              imagePullPolicy: 'IfNotPresent',
              args: engine.args.length > 0 ? [...engine.args] : undefined,
              ports: [{ name: engine.portName, containerPort: engine.port, protocol: 'TCP' }],
              env: engine.env(names.credentialsSecret),
              resources: {
                requests: quantities(options.resources?.requests ?? defaultResources.requests),
                limits: quantities(options.resources?.limits ?? defaultResources.limits),
              },
              readinessProbe: {
                exec: { command: [...engine.readinessCommand] },
                initialDelaySeconds: 5,
                periodSeconds: 5,
                timeoutSeconds: 3,
                failureThreshold: 6,
              },
              securityContext: restrictedContainerSecurityContext(true),
              volumeMounts: [
                { name: 'data', mountPath: engine.dataMountPath },
                ...engine.scratchDirs.map((dir) => ({ name: dir.name, mountPath: dir.path })),
              ],
            }],
            volumes: engine.scratchDirs.map((dir) => ({ name: dir.name, emptyDir: {} })),
          },
        },
        volumeClaimTemplates: [{
          metadata: { name: 'data', labels: selector },
          spec: {
            accessModes: ['ReadWriteOnce'],
            storageClassName: options.storageClassName,
            resources: { requests: { storage: k8s.Quantity.fromString(spec.storage) } },
          },
        }],
      },
    });
  }, options.ownerReferences);
}
