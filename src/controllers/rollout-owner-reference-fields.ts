// Works around a gap in src/kube/managed-fields.ts: an OwnerReference is an atomic struct, so
// the API server records each element of metadata.ownerReferences in the field set as
// `k:{"uid":"…"}: {}` (owned whole), but `appliedFieldsCover` descends into keyed list
// elements field by field and finds none — so every owned object looked edited and was
// re-applied on every reconcile. The controllers hand the Applier live objects whose field
// sets spell those elements out field by field (the same ownership, stated explicitly).
// Remove this once managed-fields.ts treats an empty keyed element as owned whole.
import type { KubeObject } from '../kube/index.js';

type Node = Record<string, unknown>;

const isEmptyNode = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/** `obj` with atomic ownerReference elements of its field sets expanded; `obj` itself when there are none. */
export function expandOwnerReferenceFields(obj: KubeObject): KubeObject {
  const entries = obj.metadata.managedFields;
  const refs = obj.metadata.ownerReferences;
  if (!entries?.length || !refs?.length) return obj;
  let changed = false;
  const expanded = entries.map((entry) => {
    const owners = (entry.fieldsV1?.['f:metadata'] as Node | undefined)?.['f:ownerReferences'] as Node | undefined;
    if (!owners) return entry;
    let next: Node | undefined;
    for (const [key, value] of Object.entries(owners)) {
      if (!key.startsWith('k:') || !isEmptyNode(value)) continue;
      let uid: unknown;
      try {
        uid = (JSON.parse(key.slice(2)) as { uid?: unknown }).uid;
      } catch {
        continue;
      }
      const ref = refs.find((r) => r.uid === uid);
      if (!ref) continue;
      next ??= { ...owners };
      next[key] = Object.fromEntries([['.', {}], ...Object.keys(ref).map((field) => [`f:${field}`, {}])]);
    }
    if (!next) return entry;
    changed = true;
    const metadata = { ...(entry.fieldsV1!['f:metadata'] as Node), 'f:ownerReferences': next };
    return { ...entry, fieldsV1: { ...entry.fieldsV1, 'f:metadata': metadata } };
  });
  return changed ? { ...obj, metadata: { ...obj.metadata, managedFields: expanded } } : obj;
}
