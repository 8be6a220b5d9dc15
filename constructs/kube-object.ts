// The one Kubernetes object type everything shares: the renderers return it, the custom
// resources' types specialise it (api-types.ts), the controller runtime (src/kube) reads and
// writes it. Plain JSON, so that every kind, CRDs included, round-trips without loss. This file
// imports nothing: src/kube re-exports it without taking in cdk8s or anything about previews.

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

/** `metadata`. The name is always set: rendered objects name themselves, the API server names the rest. */
export interface ObjectMeta {
  name: string;
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

/**
 * Any Kubernetes object, as rendered or as the API server sends it. `Spec` and `Status` type
 * the two fields most kinds have; other fields (a ConfigMap's `data`, …) stay `unknown`.
 */
export type KubeObject<Spec = unknown, Status = unknown> = {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Spec;
  status?: Status;
  [field: string]: unknown;
};

/** One rendered object, ready for server-side apply: the construct library's name for a `KubeObject`. */
export type Manifest = KubeObject;

/** A type of object: `{ apiVersion: 'apps/v1', kind: 'Deployment' }`. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** An object of one kind with a spec it always has: what each custom resource's type is (api-types.ts). */
export type KindObject<K extends KindRef, Spec, Status> = KubeObject<Spec, Status> & {
  apiVersion: K['apiVersion'];
  kind: K['kind'];
  spec: Spec;
};

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** CamelCase, machine-readable. */
  reason: string;
  message: string;
  /** The `metadata.generation` the condition was computed from. */
  observedGeneration?: number;
  /** When `status` last changed (RFC 3339, seconds). */
  lastTransitionTime: string;
}

/** Whether `obj` is of `kind` (same apiVersion and kind) with a spec object: the guard behind each custom resource's `is…`. */
export function isKindObject<K extends KindRef>(obj: KubeObject, kind: K): obj is KindObject<K, object, unknown> {
  return obj.apiVersion === kind.apiVersion && obj.kind === kind.kind && typeof obj.spec === 'object' && obj.spec !== null;
}

/**
 * The owner reference a controller sets on the objects it creates for `owner`: the garbage
 * collector deletes them with it, and `controller: true` marks who reconciles them.
 */
export function controllerReference(owner: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): OwnerReference {
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

/** True when `obj` is controlled by `owner` (an owner reference with `controller: true` to its uid, or to this uid). */
export function isControlledBy(obj: Pick<KubeObject, 'metadata'>, owner: Pick<KubeObject, 'metadata'> | string | undefined): boolean {
  const uid = typeof owner === 'object' ? owner.metadata.uid : owner;
  return !!uid && (obj.metadata.ownerReferences ?? []).some((ref) => ref.controller && ref.uid === uid);
}
