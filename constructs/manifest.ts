// The plain-JSON shape of what the renderers return. Structurally compatible with the
// controller runtime's KubeObject, without this library depending on it.

/** `metadata.ownerReferences[]`. */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ManifestMetadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

/** One rendered Kubernetes object, ready for server-side apply. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: ManifestMetadata;
  [field: string]: unknown;
}

/** What a controller needs to know about the object that will own rendered objects. */
export interface OwnerObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly uid: string };
}

/**
 * The owner reference a controller sets on the objects it renders for `owner`: the
 * garbage collector deletes them with it, and `controller: true` marks who reconciles them.
 */
export function controllerReference(owner: OwnerObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}
