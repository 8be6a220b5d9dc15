// The order objects are applied in: what others depend on first (namespaces, CRDs, then
// configuration, then workloads, then custom resources); pruning goes the other way.
import type { KindRef } from './kube-object.js';

const order = [
  'Namespace',
  'CustomResourceDefinition',
  'PriorityClass',
  'ResourceQuota',
  'LimitRange',
  'NetworkPolicy',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'StatefulSet',
  'Job',
  'CronJob',
  'HorizontalPodAutoscaler',
  'PodDisruptionBudget',
  'IngressClass',
  'Ingress',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
];
const builtInGroups = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'admissionregistration.k8s.io',
]);

/** Lower ranks are applied first; kinds we do not know (custom resources) come last. */
export function applyRank(kind: KindRef): number {
  const group = kind.apiVersion.includes('/') ? kind.apiVersion.slice(0, kind.apiVersion.indexOf('/')) : '';
  const index = order.indexOf(kind.kind);
  return index >= 0 && builtInGroups.has(group) ? index : order.length;
}

/** Objects grouped by rank, in apply order; order within a group is kept. */
export function applyGroups<T extends KindRef>(objects: readonly T[]): T[][] {
  const byRank = new Map<number, T[]>();
  for (const obj of objects) {
    const rank = applyRank(obj);
    byRank.set(rank, [...(byRank.get(rank) ?? []), obj]);
  }
  return [...byRank.entries()].sort(([a], [b]) => a - b).map(([, group]) => group);
}
