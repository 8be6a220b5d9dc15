// Objects are plain JSON so that every kind, CRDs included, round-trips without loss
// (client-node's typed models drop fields they do not know).

/** `metadata.ownerReferences[]`. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** `metadata.managedFields[]`: who owns which fields (server-side apply). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  [field: string]: unknown;
}

/** Any Kubernetes object, as the API server sends it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** Identifies one object: its type and where it lives. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string;
}

/** A type of object: `{ apiVersion: 'apps/v1', kind: 'Deployment' }`. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** `v1` → `''`, `apps/v1` → `'apps'`. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * The work-queue key of an object, as client-go writes it: `namespace/name`,
 * or `name` for cluster-scoped objects.
 */
export function objectKey(obj: { metadata: { name?: string; namespace?: string } }): string {
  const name = obj.metadata.name ?? '';
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${name}` : name;
}

/** Inverse of `objectKey`. */
export function parseKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The reference of an object (for get/patch/delete). */
export function refOf(obj: KubeObject): ObjectRef {
  const ref: ObjectRef = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '' };
  if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
  return ref;
}

/**
 * A version-independent identity (`group/Kind/namespace/name`): the same object
 * reached through `v1beta1` and `v1` compares equal.
 */
export function identityOf(ref: ObjectRef | KubeObject): string {
  const r = 'metadata' in ref ? refOf(ref as KubeObject) : (ref as ObjectRef);
  return `${groupOf(r.apiVersion)}/${r.kind}/${r.namespace ?? ''}/${r.name}`;
}

/** An owner reference that makes `owner` the controller of another object (garbage collection follows it). */
export function controllerReference(owner: KubeObject): OwnerReference {
  if (!owner.metadata.uid || !owner.metadata.name) throw new Error(`${owner.kind} has no name/uid yet: read it from the API server first`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
