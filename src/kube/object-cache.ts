// The informer's store: objects by key, with secondary indexes kept in step on every change.
import { objectKey, type KubeObject } from './kube-object.js';

/** Computes the index values of an object (e.g. its owners' uids). */
export type IndexFunction<T extends KubeObject> = (obj: T) => string[];

const labelIndex = '__label';
const ownerIndex = '__owner';
const namespaceIndex = '__namespace';

export class ObjectCache<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunction<T>>();
  /** index name → index value → keys. */
  private readonly indexes = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndex(labelIndex, (obj) => Object.entries(obj.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`));
    this.addIndex(ownerIndex, (obj) => (obj.metadata.ownerReferences ?? []).map((o) => o.uid));
    this.addIndex(namespaceIndex, (obj) => [obj.metadata.namespace ?? '']);
  }

  /** Adds an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    if (this.indexers.has(name)) throw new Error(`index ${name} already exists`);
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indexes.set(name, index);
    for (const [key, obj] of this.items) for (const value of fn(obj)) addTo(index, value, key);
  }

  get size(): number {
    return this.items.size;
  }

  /** By key: `namespace/name`, or `name` for cluster-scoped objects. */
  get(key: string): T | undefined {
    return this.items.get(key);
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** All objects, or those of one namespace. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.items.values()];
    return this.byIndex(namespaceIndex, namespace);
  }

  /** Objects whose label `label` has value `value`. */
  byLabel(label: string, value: string): T[] {
    return this.byIndex(labelIndex, `${label}=${value}`);
  }

  /** Objects with an ownerReference to this uid. */
  byOwner(uid: string): T[] {
    return this.byIndex(ownerIndex, uid);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.indexes.get(name);
    if (!index) throw new Error(`no index ${name}`);
    return [...(index.get(value) ?? [])].map((key) => this.items.get(key)!);
  }

  /** Stores the object; returns the previous version under its key. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) {
      const index = this.indexes.get(name)!;
      const values = fn(obj);
      const previous = old ? fn(old) : [];
      // Most updates are status changes: labels and owners stay, and so do the index's sets.
      if (sameValues(previous, values)) continue;
      for (const value of previous) removeFrom(index, value, key);
      for (const value of values) addTo(index, value, key);
    }
    return old;
  }

  /** Removes the object under `key`; returns it. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indexes.get(name)!;
      for (const value of fn(obj)) removeFrom(index, value, key);
    }
  }
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  let keys = index.get(value);
  if (!keys) index.set(value, (keys = new Set()));
  keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  keys?.delete(key);
  if (keys?.size === 0) index.delete(value);
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
