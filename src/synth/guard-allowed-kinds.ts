// Which kinds a rendering may contain, written as kubectl writes them: `Kind` for the core
// group, `Kind.group` otherwise (`Deployment.apps`, `Algorithm.ai.alien6.io`). Only namespaced
// kinds belong here: a preview lives in its namespace, and a cluster-scoped object would
// outlive it or reach beyond it.

/** A kind without its version: the same kind served as v1beta1 and v1 is one entry. */
export interface GroupKind {
  group: string;
  kind: string;
}

/**
 * What a rendering may contain unless configured otherwise: workloads, their configuration,
 * networking within the namespace, namespaced RBAC and the operator's own kinds. Not allowed
 * by default: ResourceQuota, LimitRange and NetworkPolicy (the operator writes the namespace's
 * own, and a repository's could lift its budget or its isolation), PodDisruptionBudgets (a
 * preview needs none, and one that allows no eviction holds up its nodes' drains), DaemonSets and
 * ReplicaSets.
 */
export const defaultAllowedKinds: readonly string[] = [
  'ConfigMap',
  'Secret',
  'Service',
  'ServiceAccount',
  'PersistentVolumeClaim',
  'Pod',
  'Deployment.apps',
  'StatefulSet.apps',
  'Job.batch',
  'CronJob.batch',
  'HorizontalPodAutoscaler.autoscaling',
  'Ingress.networking.k8s.io',
  'Role.rbac.authorization.k8s.io',
  'RoleBinding.rbac.authorization.k8s.io',
  'Algorithm.ai.alien6.io',
  'Database.mycompany.com',
  'Certificate.cert-manager.io',
];

/** Cluster-scoped kinds a rendering might plausibly contain, refused by name (discovery catches the rest). */
const clusterScoped = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/VolumeAttachment',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'certificates.k8s.io/CertificateSigningRequest',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'cert-manager.io/ClusterIssuer',
  'preview.alien6.io/PreviewEnvironment',
]);

export function groupKindOf(object: { apiVersion: string; kind: string }): GroupKind {
  const slash = object.apiVersion.indexOf('/');
  return { group: slash < 0 ? '' : object.apiVersion.slice(0, slash), kind: object.kind };
}

export function formatGroupKind(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

export function isKnownClusterScoped(gk: GroupKind): boolean {
  return clusterScoped.has(`${gk.group}/${gk.kind}`);
}

/** A set of allowed kinds, parsed (and checked) once. */
export class AllowedKinds {
  private readonly entries: Set<string>;
  readonly kinds: readonly GroupKind[];

  /** Throws on a malformed entry or a known cluster-scoped kind. */
  constructor(entries: readonly string[] = defaultAllowedKinds) {
    const kinds: GroupKind[] = [];
    for (const entry of entries) {
      const match = /^([A-Z][A-Za-z0-9]*)(?:\.([a-z0-9]([-a-z0-9.]*[a-z0-9])?))?$/.exec(entry.trim());
      if (!match) throw new Error(`allowed kind "${entry}" must be written Kind or Kind.group, e.g. Deployment.apps`);
      const gk = { group: match[2] ?? '', kind: match[1]! };
      if (isKnownClusterScoped(gk)) throw new Error(`allowed kind "${entry}" is cluster-scoped; only namespaced kinds may be allowed`);
      kinds.push(gk);
    }
    this.kinds = kinds;
    this.entries = new Set(kinds.map((k) => `${k.group}/${k.kind}`));
  }

  has(gk: GroupKind): boolean {
    return this.entries.has(`${gk.group}/${gk.kind}`);
  }
}
