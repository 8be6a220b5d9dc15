// Whether a namespace is on its way out. The namespace controller deletes what it holds, and the
// API server refuses every create in it (403 "being terminated"): a controller that re-applies a
// child the namespace controller just removed only collects refusals. So the Algorithm and Database
// controllers look at the namespace first and leave its objects alone once it is going; the objects
// go with it. The 403 stays handled for the moment the cache has not seen the deletion yet.
import type { CacheReader, KindRef, KubeObject } from '../kube/index.js';

export const namespaceKind: KindRef = { apiVersion: 'v1', kind: 'Namespace' };

/** True when the cached namespace has a deletionTimestamp (or says Terminating); false when unknown. */
export function namespaceTerminating(namespaces: CacheReader | undefined, name: string | undefined): boolean {
  if (!namespaces || !name) return false;
  const namespace = namespaces.get(name) as (KubeObject & { status?: { phase?: string } }) | undefined;
  return !!namespace && (!!namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating');
}

/** The namespace informer's options for a controller watching `namespace` (one), or every namespace. */
export function namespaceInformerOptions(namespace: string | undefined): { fieldSelector?: string } {
  return namespace ? { fieldSelector: `metadata.name=${namespace}` } : {};
}
