// The object type is constructs/kube-object.ts: one type for rendered objects, custom resources
// and the runtime (that file imports nothing, so the runtime takes in no cdk8s). Here: how the
// runtime names and addresses objects.
import type { KubeObject } from '../../constructs/kube-object.js';

export {
  controllerReference,
  isControlledBy,
  type Condition,
  type KindRef,
  type KubeObject,
  type ManagedFieldsEntry,
  type ObjectMeta,
  type OwnerReference,
} from '../../constructs/kube-object.js';

/** Identifies one object: its type and where it lives. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Absent for cluster-scoped objects. */
  namespace?: string;
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
