// Server-side apply's bookkeeping, as far as the fake API server (fake-cluster.ts) needs it: the
// field set of an applied object (FieldsV1, lists and values owned whole), what a manager stops
// applying leaves the object unless another manager owns it, and a forced apply or an update
// takes fields from the managers that held them. Enough for the Applier's "unchanged" check
// (src/kube/managed-fields.ts) and for who owns a Deployment's replicas; not the real merge
// strategies (keyed lists are replaced whole).
import type { KubeObject, ManagedFieldsEntry } from '../../src/kube/index.js';

type FieldsNode = Record<string, unknown>;
type Json = Record<string, unknown>;

/** Never part of a field set: identity and what the server sets. */
const serverMetadata = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'managedFields',
  'generateName',
]);

export function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The fields `obj` sets (status aside): maps field by field, lists and values as leaves. */
export function fieldSetOf(obj: Json): FieldsNode {
  const node: FieldsNode = {};
  for (const [key, value] of Object.entries(obj)) {
    if (value === undefined || value === null || key === 'apiVersion' || key === 'kind' || key === 'status') continue;
    if (key === 'metadata' && isPlainObject(value)) {
      const meta = Object.fromEntries(Object.entries(value).filter(([k]) => !serverMetadata.has(k)));
      if (Object.keys(meta).length > 0) node['f:metadata'] = fieldsOf(meta);
      continue;
    }
    node[`f:${key}`] = fieldsOf(value);
  }
  return node;
}

function fieldsOf(value: unknown): FieldsNode {
  if (!isPlainObject(value)) return {};
  const node: FieldsNode = {};
  for (const [key, child] of Object.entries(value)) {
    if (child !== undefined && child !== null) node[`f:${key}`] = fieldsOf(child);
  }
  return node;
}

/** The leaves of a field set, as paths of field names. */
export function leafPaths(node: FieldsNode, prefix: string[] = []): string[][] {
  const children = Object.keys(node).filter((k) => k.startsWith('f:'));
  if (children.length === 0) return prefix.length > 0 ? [prefix] : [];
  return children.flatMap((k) => leafPaths(node[k] as FieldsNode, [...prefix, k.slice(2)]));
}

function hasPath(node: FieldsNode, path: string[]): boolean {
  let at: unknown = node;
  for (const name of path) {
    if (!isPlainObject(at) || !(`f:${name}` in at)) return false;
    at = at[`f:${name}`];
  }
  return true;
}

function withoutPaths(node: FieldsNode, taken: FieldsNode): FieldsNode {
  const out: FieldsNode = {};
  for (const [key, child] of Object.entries(node)) {
    const other = taken[key];
    if (other === undefined) out[key] = child;
    else if (Object.keys(other as FieldsNode).length > 0 && Object.keys(child as FieldsNode).length > 0) {
      const rest = withoutPaths(child as FieldsNode, other as FieldsNode);
      if (Object.keys(rest).length > 0) out[key] = rest;
    }
  }
  return out;
}

function union(a: FieldsNode, b: FieldsNode): FieldsNode {
  const out: FieldsNode = { ...a };
  for (const [key, value] of Object.entries(b)) {
    out[key] = isPlainObject(out[key]) ? union(out[key] as FieldsNode, value as FieldsNode) : value;
  }
  return out;
}

/** Deep merge of `patch` into `base`: maps merged, everything else replaced; null removes (merge patch). */
export function mergeInto(base: Json, patch: Json): Json {
  const out: Json = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else out[key] = isPlainObject(value) && isPlainObject(out[key]) ? mergeInto(out[key] as Json, value) : structuredClone(value);
  }
  return out;
}

function removePath(obj: Json, path: string[]): void {
  let at: unknown = obj;
  for (const name of path.slice(0, -1)) {
    if (!isPlainObject(at)) return;
    at = at[name];
  }
  if (isPlainObject(at)) delete at[path[path.length - 1]!];
}

/**
 * `manager` applies `desired` to `live` (undefined: a create): the result's content and
 * managedFields. Fields the manager applied before and no longer does go, unless another
 * manager owns them; fields it applies now are taken from whoever owned them (force).
 */
export function applyFields(live: KubeObject | undefined, desired: KubeObject, manager: string): KubeObject {
  const entries = live?.metadata.managedFields ?? [];
  const previous = entries.find((e) => e.manager === manager && e.operation === 'Apply' && !e.subresource)?.fieldsV1 ?? {};
  const next = fieldSetOf(desired);
  const others = entries.filter((e) => !(e.manager === manager && e.operation === 'Apply' && !e.subresource));
  const content = mergeInto(live ? withoutServerSide(live) : {}, withoutServerSide(desired));
  for (const path of leafPaths(previous)) {
    if (hasPath(next, path) || others.some((e) => hasPath(e.fieldsV1 ?? {}, path))) continue;
    removePath(content, path);
  }
  const entry: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion: desired.apiVersion, fieldsType: 'FieldsV1', fieldsV1: next };
  const managedFields = [...takeFrom(others, next), entry];
  return { ...(content as KubeObject), status: live?.status, metadata: { ...(content.metadata as KubeObject['metadata']), managedFields } };
}

/** `manager` writes `patch` (a merge patch of the main resource) on `live`: content and managedFields. */
export function updateFields(live: KubeObject, patch: Json, manager: string): KubeObject {
  const content = mergeInto(withoutServerSide(live), patch);
  const changed = fieldSetOf(patch);
  const entries = live.metadata.managedFields ?? [];
  const mine = entries.find((e) => e.manager === manager && e.operation === 'Update' && !e.subresource);
  const others = entries.filter((e) => e !== mine);
  const fieldsV1 = union(mine?.fieldsV1 ?? {}, changed);
  const entry: ManagedFieldsEntry = { manager, operation: 'Update', apiVersion: live.apiVersion, fieldsType: 'FieldsV1', fieldsV1 };
  const managedFields = [...takeFrom(others, changed), entry];
  return { ...(content as KubeObject), status: live.status, metadata: { ...(content.metadata as KubeObject['metadata']), managedFields } };
}

function takeFrom(entries: ManagedFieldsEntry[], taken: FieldsNode): ManagedFieldsEntry[] {
  return entries
    .map((e) => (e.subresource ? e : { ...e, fieldsV1: withoutPaths(e.fieldsV1 ?? {}, taken) }))
    .filter((e) => e.subresource || Object.keys(e.fieldsV1 ?? {}).length > 0);
}

/** The object without status and without what the server keeps itself (it is put back by the caller). */
function withoutServerSide(obj: KubeObject): Json {
  const { status: _status, ...rest } = obj;
  const { managedFields: _managed, ...metadata } = obj.metadata;
  return structuredClone({ ...rest, metadata });
}
