import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { attachCluster, kubeconfigYaml, startCluster, type ClusterHandle } from '../cluster/start-cluster.js';
import type { AuditLog } from '../cluster/audit-log.js';

/** Environment variable through which the test runner hands its cluster to every test file. */
export const sharedClusterEnv = 'KUBE_LOCAL_CLUSTER';

export interface TestCluster extends ClusterHandle {
  kubeConfig: KubeConfig;
  audit: AuditLog;
}

let current: Promise<TestCluster> | undefined;

/**
 * The cluster for this test file: the one the test runner started (shared by all
 * files, so tests isolate themselves by namespace and identity), or, when a file is
 * run on its own, a private one that ends with the file's process. Either runs
 * cert-manager, whose CA ClusterIssuer `preview-issuer` issues the previews' certificates. Not stopped by an
 * `after` hook: one registered here, inside the `before` hook that asks for the cluster,
 * runs as soon as that hook ends (node:test), and one registered at load would run ahead
 * of the file's own `after` hooks, which still need the cluster.
 */
export function testCluster(): Promise<TestCluster> {
  current ??= (async () => {
    const shared = process.env[sharedClusterEnv];
    if (shared) return attachCluster(JSON.parse(shared) as ClusterHandle);
    return startCluster({ keepsProcessAlive: false, certManager: true });
  })();
  return current;
}

/** A DNS-1123 name unique to this run, for namespaces and other cluster-scoped names. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`.toLowerCase();
}

export async function createNamespace(kc: KubeConfig, name: string, labels: Record<string, string> = {}): Promise<void> {
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name, labels } } });
}

export interface Identity {
  /** The username the audit log records for this identity. */
  username: string;
  kubeConfig: KubeConfig;
}

/**
 * A fresh ServiceAccount identity bound to the given ClusterRole (default
 * cluster-admin). Tests act through one so that the audit log's writes by that
 * user are exactly the writes the code under test made.
 */
export async function newIdentity(cluster: TestCluster, name: string, clusterRole = 'cluster-admin'): Promise<Identity> {
  const kc = cluster.kubeConfig;
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = 'kube-local-identities';
  await core.createNamespace({ body: { metadata: { name: namespace } } }).catch((err: { code?: number }) => {
    if (err.code !== 409) throw err;
  });
  const saName = uniqueName(name);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: saName } } });
  await kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: `kube-local-${saName}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ kind: 'ServiceAccount', name: saName, namespace }],
    },
  });
  const token = await core.createNamespacedServiceAccountToken({
    namespace,
    name: saName,
    body: { spec: { expirationSeconds: 24 * 3600, audiences: [] } },
  });
  const identity = new KubeConfig();
  const caFile = kc.getCurrentCluster()!.caFile!;
  identity.loadFromString(kubeconfigYaml(cluster.server, caFile, token.status!.token, saName));
  return { username: `system:serviceaccount:${namespace}:${saName}`, kubeConfig: identity };
}
