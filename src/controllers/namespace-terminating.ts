// Whether a namespace is on its way out. The namespace controller deletes what it holds, and the
// API server refuses every create in it (403 "being terminated"): a controller that re-applies a
// child the namespace controller just removed only collects refusals. So the Algorithm and Database
// controllers look at the namespace first and leave its objects alone once it is going; the objects
// go with it. The cache may lag (its watch is not the one that saw the children go, and an API
// server restart re-lists them in any order), so before a create — a child missing from the cache
// — the API server itself is asked. The 403 stays handled for a deletion that starts in between.
import { NotFoundError, type CacheReader, type KindRef, type KubeObject, type ObjectClient, type WatchEventType } from '../kube/index.js';

export const namespaceKind: KindRef = { apiVersion: 'v1', kind: 'Namespace' };

/** True when the cached namespace has a deletionTimestamp (or says Terminating); false when unknown. */
export function namespaceTerminating(namespaces: CacheReader | undefined, name: string | undefined): boolean {
  if (!namespaces || !name) return false;
  const namespace = namespaces.get(name) as (KubeObject & { status?: { phase?: string } }) | undefined;
  return !!namespace && (!!namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating');
}

/** Whether `obj` is in a namespace the cache shows being deleted (a controller's `ignore`: its events wake nothing). */
export function inTerminatingNamespace(namespaces: CacheReader): (obj: KubeObject) => boolean {
  return (obj) => namespaceTerminating(namespaces, obj.metadata.namespace);
}

/**
 * An update of a namespace that was already being deleted (a controller's `ignore`): the namespace
 * controller updates its conditions as it empties it, and none of that is news to the owner, which
 * polls a namespace going and is woken by its DELETED event. The update that starts the deletion
 * still wakes (its old object is not going), as does the deletion itself.
 */
export function namespaceUpdateWhileGoing(obj: KubeObject, event: WatchEventType): boolean {
  return event === 'update' && obj.apiVersion === 'v1' && obj.kind === 'Namespace' && !!obj.metadata.deletionTimestamp;
}

/** The namespace informer's options for a controller watching `namespace` (one), or every namespace. */
export function namespaceInformerOptions(namespace: string | undefined): { fieldSelector?: string } {
  return namespace ? { fieldSelector: `metadata.name=${namespace}` } : {};
}

/** The namespace is being deleted (or is gone): nothing is to be created in it. */
export class NamespaceTerminatingError extends Error {
  constructor(readonly namespace: string) {
    super(`namespace ${namespace} is being deleted`);
    this.name = 'NamespaceTerminatingError';
  }
}

/**
 * Before a create: throws NamespaceTerminatingError when the API server (a read from etcd, not a
 * cache) says the namespace is going. One that is not there at all is left to the create to find.
 */
export async function ensureNamespaceActive(client: ObjectClient, name: string): Promise<void> {
  let namespace: KubeObject & { status?: { phase?: string } };
  try {
    namespace = await client.get({ ...namespaceKind, name });
  } catch (err) {
    if (err instanceof NotFoundError) return;
    throw err;
  }
  if (namespace.metadata.deletionTimestamp || namespace.status?.phase === 'Terminating') throw new NamespaceTerminatingError(name);
}

/** Whether applying `objects` would create one: a kind one of `caches` holds, and the cache has no such object. */
export function createsAny(caches: readonly CacheReader[], objects: readonly KubeObject[]): boolean {
  return objects.some((o) => {
    const cache = caches.find((c) => c.kind.kind === o.kind && c.kind.apiVersion === o.apiVersion);
    if (!cache) return false;
    const found = cache.lookup(`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
    return found === undefined || found === 'absent';
  });
}
