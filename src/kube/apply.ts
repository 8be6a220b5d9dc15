// Server-side apply of a set of objects, in dependency order, writing nothing for objects
// already as desired; and prune: delete what carries the set's ownership label but was
// not in it, for the kinds and namespaces named, and nothing else.
//
// "Already as desired" is decided without a write: the live object (from a cache or a GET)
// carries the hash of the manifest we last applied to it, and our field-manager entry still
// owns every field of the desired object (see managed-fields.ts). A changed manifest, an
// object edited or deleted by someone else — each fails one of the two checks and is applied.
//
// Before a new set's first write, `dryRunWrites` lets the API server judge every object that
// would be written (validation, CEL rules, admission) without persisting any: a refusal then
// leaves nothing half-applied. What a dry run cannot judge (apply-dependencies.ts) is refused, if
// at all, at its real write; `undoCreated` then deletes what that apply had created.
import { hash } from 'node:crypto';
import type { ObjectClient } from './object-client.js';
import { needsSetWrittenFirst } from './apply-dependencies.js';
import { applyGroups, applyRank } from './apply-order.js';
import { NotFoundError } from './errors.js';
import { groupOf, identityOf, refOf, type KindRef, type KubeObject, type ObjectRef } from './kube-object.js';
import type { CacheReader } from './informer.js';
import { appliedFieldsCover } from './managed-fields.js';
import { OwnWrites } from './own-writes.js';

/** The label that marks objects as members of one applied set (what prune looks for). */
export interface Ownership {
  label: string;
  value: string;
}

/**
 * `created`: no live object was known before the apply (not read, or a cache said absent) — an
 * object written a moment ago by someone else may exist all the same; `configured`: one was
 * known and differed; `unchanged`: one was known and already as desired (nothing written).
 */
export type ApplyAction = 'created' | 'configured' | 'unchanged';

/** Live objects by identity (`identityOf`), undefined where none exists, as `dryRunWrites` read them. */
export type LiveObjects = ReadonlyMap<string, KubeObject | undefined>;

export interface ApplyResult {
  ref: ObjectRef;
  action: ApplyAction;
  /** The object as the server returned it (or the live object, when unchanged). */
  object: KubeObject;
}

export interface ApplySetOptions {
  /** Added as a label to every object, so `prune` can find them later. */
  ownership?: Ownership;
  /** Server-side dry run: validated and admitted by the API server, nothing persisted. */
  dryRun?: boolean;
  /**
   * None of the objects can exist yet (their namespace was created a moment ago by the same
   * caller): they are applied without being read first.
   */
  fresh?: boolean;
  /**
   * The live objects `dryRunWrites` read for this same set a moment ago: `apply` decides
   * "unchanged" from them instead of reading again (a stale answer costs what a stale cache does).
   */
  live?: LiveObjects;
  /**
   * When a write fails part-way, delete the objects this apply created (action `created`,
   * dependents first) before the error is thrown, so the set leaves no new objects behind.
   * Best effort: one that cannot be deleted stays (labelled, for prune). Objects it changed stay changed.
   */
  undoCreated?: boolean;
}

export interface DryRunOptions extends Pick<ApplySetOptions, 'ownership' | 'fresh'> {
  /**
   * Objects of the set the caller applies before the others, without a dry run (their real write
   * judges them, and stops the set): not sent, but still counted as created for what the others
   * depend on (a Pod of a ServiceAccount the set creates is left to its real write, as ever).
   */
  unjudged?: ReadonlySet<KubeObject>;
}

export interface PruneOptions {
  ownership: Ownership;
  /** The objects to keep (the desired set). */
  keep: readonly (KubeObject | ObjectRef)[];
  /** The kinds to look at; nothing of any other kind is ever deleted. */
  kinds: readonly KindRef[];
  /** The namespaces to look in, for namespaced kinds. Cluster-scoped kinds are looked up cluster-wide. */
  namespaces: readonly string[];
  dryRun?: boolean;
}

export interface ApplierOptions {
  /** The annotation holding the hash of the last applied manifest (default `<fieldManager>/applied-hash`). */
  hashAnnotation?: string;
  /**
   * A cache to read live objects from (e.g. an informer's `get`). `'absent'`: a synced cache
   * that would hold the object has none, so it is applied without a GET (the GET could only
   * have found it unchanged if it was written a moment ago). `undefined`: not known, GET it.
   * A stale answer costs at most one redundant apply, or a skip that the next event repairs.
   */
  lookup?: (ref: ObjectRef) => KubeObject | 'absent' | undefined;
  /**
   * The last resourceVersion the cache behind `lookup` has seen for the kind of `ref` (its watch's).
   * With it, the Applier reads its own writes: until the cache has caught up with an object it
   * applied, the server's answer stands for the cached copy, so a reconcile woken before the
   * watch event does not apply the same manifest again (own-writes.ts).
   */
  seen?: (ref: ObjectRef) => string | undefined;
  /** How long to wait for an applied CRD to be Established before applying its objects (default 30 s). */
  crdEstablishTimeoutMs?: number;
}

/** The cache among `caches` that holds objects of `ref`'s kind. */
export function cacheOfKind(caches: readonly CacheReader[], ref: KindRef): CacheReader | undefined {
  return caches.find((c) => c.kind.kind === ref.kind && c.kind.apiVersion === ref.apiVersion);
}

/** An Applier's `lookup` and `seen` from informers' caches (undefined for kinds none of them holds). */
export function cachedLookup(caches: readonly CacheReader[]): Required<Pick<ApplierOptions, 'lookup' | 'seen'>> {
  return {
    lookup: (ref) => cacheOfKind(caches, ref)?.lookup(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name),
    seen: (ref) => cacheOfKind(caches, ref)?.lastResourceVersion?.(),
  };
}

export class Applier {
  readonly hashAnnotation: string;
  /**
   * Each object's prepared copy (with its hash), by the caller's object: a set is prepared for its dry run and again
   * for its apply, and applied objects are checked again on later reconciles. Objects handed to the Applier are never
   * changed afterwards (a changed object is a new one), so the copy stays right; it goes with the caller's object.
   */
  private readonly prepared = new WeakMap<KubeObject, { ownership: string; copy: KubeObject }>();
  /** The server's answers to our applies, while the cache behind `lookup` has not caught up (only with `seen`). */
  private readonly own = new OwnWrites({
    cacheOf: (obj) => {
      const ref = refOf(obj);
      return { cached: this.options.lookup?.(ref), seen: this.options.seen?.(ref) };
    },
  });

  constructor(
    private readonly client: ObjectClient,
    private readonly options: ApplierOptions = {},
  ) {
    this.hashAnnotation = options.hashAnnotation ?? `${client.fieldManager}/applied-hash`;
  }

  /**
   * Applies `objects` with server-side apply (field manager of the client, force), in
   * dependency order, objects of one rank in parallel. Objects already as desired are not
   * written. Stops at the first error (later ranks are not applied, earlier ones stay unless
   * `undoCreated`: for all or nothing, `dryRunWrites` first).
   */
  async apply(objects: readonly KubeObject[], options: ApplySetOptions = {}): Promise<ApplyResult[]> {
    const prepared = this.prepareSet(objects, options.ownership);
    const results: ApplyResult[] = [];
    try {
      for (const group of applyGroups(prepared)) {
        const outcomes = await Promise.allSettled(group.map((obj) => this.applyOne(obj, options)));
        const applied = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
        results.push(...applied);
        const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
        if (failed) throw failed.reason;
        // Objects of a new or changed CRD can only be applied once it serves them.
        const crds = applied.filter((r) => isCrd(r.ref) && r.action !== 'unchanged');
        if (!options.dryRun) await Promise.all(crds.map((r) => this.waitEstablished(r.object)));
      }
    } catch (err) {
      if (options.undoCreated && !options.dryRun) await this.deleteCreated(results);
      throw err;
    }
    return results;
  }

  /**
   * All or nothing, as far as the API server can tell ahead: every object of the set that
   * `apply` would write (read as `apply` reads: cache, else GET; nothing when `fresh`) passes a
   * server-side dry run, all at once. Throws the first refusal in set order, having written
   * nothing; returns what it read, for `apply`'s `live`. Objects whose admission needs another
   * object the set creates are left to their real write (apply-dependencies.ts). Counts, such as
   * a ResourceQuota's, are checked per object: a set that fits only one by one passes.
   */
  async dryRunWrites(objects: readonly KubeObject[], options: DryRunOptions = {}): Promise<LiveObjects> {
    const prepared = this.prepareSet(objects, options.ownership);
    const unjudged = new Set(objects.filter((obj) => options.unjudged?.has(obj)).map((obj) => identityOf(obj)));
    const read = (obj: KubeObject) => (options.fresh ? undefined : this.live(refOf(obj)));
    const live = new Map(await Promise.all(prepared.map(async (obj) => [identityOf(obj), await read(obj)] as const)));
    const writes = prepared.filter((obj) => {
      const current = live.get(identityOf(obj));
      return !(current && this.isUnchanged(current, obj));
    });
    const created = new Set(writes.filter((obj) => !live.get(identityOf(obj))).map((obj) => identityOf(obj)));
    const crds = writes.filter((obj) => isCrd(obj));
    const judged = writes.filter((obj) => !unjudged.has(identityOf(obj)) && !needsSetWrittenFirst(obj, created, crds));
    const outcomes = await Promise.allSettled(judged.map((obj) => this.client.apply(obj, { force: true, dryRun: true })));
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (refused) throw refused.reason;
    return live;
  }

  /** Whether `apply` would leave `live` as it is (write nothing) for `desired`. */
  isApplied(live: KubeObject, desired: KubeObject, ownership?: Ownership): boolean {
    return this.isUnchanged(live, this.prepare(desired, ownership));
  }

  /**
   * Deletes the objects of `kinds` in `namespaces` that carry the ownership label with its
   * value and are not in `keep`. Returns what was deleted (or would be, in a dry run).
   */
  async prune(options: PruneOptions): Promise<ObjectRef[]> {
    const keep = new Set(options.keep.map((k) => identityOf(k)));
    const selector = `${options.ownership.label}=${options.ownership.value}`;
    const doomed: KubeObject[] = [];
    for (const kind of options.kinds) {
      const info = await this.client.resolve(kind);
      const scopes = info.namespaced ? options.namespaces : [undefined];
      for (const namespace of scopes) {
        const { items } = await this.client.list(kind, { namespace, labelSelector: selector });
        for (const obj of items) {
          // The selector already says so; checked again because deleting is not undoable.
          if (obj.metadata.labels?.[options.ownership.label] !== options.ownership.value) continue;
          if (info.namespaced && obj.metadata.namespace !== namespace) continue;
          if (keep.has(identityOf({ ...refOf(obj), apiVersion: kind.apiVersion }))) continue;
          if (obj.metadata.deletionTimestamp) continue;
          doomed.push({ ...obj, apiVersion: kind.apiVersion, kind: kind.kind });
        }
      }
    }
    // Dependents first: the reverse of the apply order.
    doomed.sort((a, b) => applyRank(b) - applyRank(a));
    const deleted: ObjectRef[] = [];
    for (const obj of doomed) {
      try {
        await this.client.delete(refOf(obj), { preconditions: { uid: obj.metadata.uid }, dryRun: options.dryRun });
        if (!options.dryRun) this.own.forget(identityOf(obj));
        deleted.push(refOf(obj));
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
      }
    }
    return deleted;
  }

  /** Deletes what an apply created, the reverse of the apply order; exactly those objects (uid), and none that fail to go. */
  private async deleteCreated(results: readonly ApplyResult[]): Promise<void> {
    const created = results.filter((r) => r.action === 'created').reverse();
    for (const { ref, object } of created) {
      this.own.forget(identityOf(ref));
      await this.client.delete(ref, { preconditions: { uid: object.metadata.uid } }).catch(() => undefined);
    }
  }

  /** The hash `apply` records for this manifest (after the ownership label is added). */
  manifestHash(obj: KubeObject): string {
    // Without the hash annotation itself (canonicalJson leaves out undefined, as deleting would).
    const { [this.hashAnnotation]: _previous, ...annotations } = obj.metadata.annotations ?? {};
    const hashed = { ...obj, metadata: { ...obj.metadata, annotations: Object.keys(annotations).length > 0 ? annotations : undefined } };
    return hash('sha256', canonicalJson(hashed), 'hex').slice(0, 32);
  }

  /** Every object prepared; an object twice in the set is an error. */
  private prepareSet(objects: readonly KubeObject[], ownership: Ownership | undefined): KubeObject[] {
    const prepared = objects.map((obj) => this.prepare(obj, ownership));
    const seen = new Set<string>();
    for (const obj of prepared) {
      const id = identityOf(obj);
      if (seen.has(id)) throw new Error(`${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name} appears twice in the set`);
      seen.add(id);
    }
    return prepared;
  }

  private prepare(obj: KubeObject, ownership: Ownership | undefined): KubeObject {
    const owner = ownership ? `${ownership.label}=${ownership.value}` : '';
    const known = this.prepared.get(obj);
    if (known?.ownership === owner) return known.copy;
    const copy = this.prepareCopy(obj, ownership);
    this.prepared.set(obj, { ownership: owner, copy });
    return copy;
  }

  private prepareCopy(obj: KubeObject, ownership: Ownership | undefined): KubeObject {
    if (!obj.apiVersion || !obj.kind || !obj.metadata?.name)
      throw new Error(`every object needs apiVersion, kind and metadata.name: ${JSON.stringify(obj).slice(0, 200)}`);
    // Only the top level and metadata are changed below (labels and annotations replaced, never
    // edited), so a shallow copy leaves the caller's object as it was: a deep one per object and
    // reconcile was 2 % of the operator's CPU in a burst.
    const copy: KubeObject = { ...obj, metadata: { ...obj.metadata } };
    for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'generation', 'managedFields', 'selfLink'])
      delete copy.metadata[field];
    if (copy.apiVersion === 'v1' && copy.kind === 'Secret' && copy.stringData) {
      // stringData is write-only: the server folds it into data and never shows it again, so
      // fields owned under it could not reveal an edit of data. Fold it here, as the server would.
      const data = { ...(copy.data as Record<string, string> | undefined) };
      for (const [k, v] of Object.entries(copy.stringData as Record<string, string>)) data[k] = Buffer.from(v, 'utf8').toString('base64');
      copy.data = data;
      delete copy.stringData;
    }
    if (ownership) copy.metadata.labels = { ...copy.metadata.labels, [ownership.label]: ownership.value };
    copy.metadata.annotations = { ...copy.metadata.annotations, [this.hashAnnotation]: this.manifestHash(copy) };
    return copy;
  }

  private async applyOne(desired: KubeObject, options: ApplySetOptions): Promise<ApplyResult> {
    const ref = refOf(desired);
    const id = identityOf(desired);
    const live = options.live?.has(id) ? options.live.get(id) : options.fresh ? undefined : await this.live(ref);
    if (live && this.isUnchanged(live, desired)) return { ref, action: 'unchanged', object: live };
    const object = await this.client.apply(desired, { force: true, dryRun: options.dryRun ?? false });
    // Only where a cache will catch up: an answer nothing can supersede would only be held.
    if (!options.dryRun && this.options.seen?.(ref) !== undefined) this.own.remember(id, object);
    return { ref, action: live ? 'configured' : 'created', object };
  }

  private isUnchanged(live: KubeObject, desired: KubeObject): boolean {
    if (live.metadata.deletionTimestamp) return false;
    if (live.metadata.annotations?.[this.hashAnnotation] !== desired.metadata.annotations?.[this.hashAnnotation]) return false;
    return appliedFieldsCover(live, desired, this.client.fieldManager);
  }

  /**
   * The live object as far as known without a request: the cache's copy (`lookup`), or our own
   * last write of it while the cache has not caught up (`seen`). `'absent'`: known not to exist;
   * undefined: not known.
   */
  known(ref: ObjectRef): KubeObject | 'absent' | undefined {
    const cached = this.options.lookup?.(ref);
    const { seen } = this.options;
    return seen ? this.own.freshest(identityOf(ref), cached, seen(ref)) : cached;
  }

  private async live(ref: ObjectRef): Promise<KubeObject | undefined> {
    const cached = this.known(ref);
    if (cached === 'absent') return undefined;
    if (cached) return cached;
    try {
      return await this.client.get(ref);
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** Waits until a CRD serves its kinds, then drops discovery's cache for its group. */
  private async waitEstablished(crd: KubeObject): Promise<void> {
    const deadline = Date.now() + (this.options.crdEstablishTimeoutMs ?? 30_000);
    const ref = refOf(crd);
    for (;;) {
      const current = await this.client.get(ref);
      const conditions = (current.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new Error(`CustomResourceDefinition ${ref.name} not Established after ${this.options.crdEstablishTimeoutMs ?? 30_000} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const spec = crd.spec as { group?: string; versions?: { name: string }[] } | undefined;
    for (const v of spec?.versions ?? []) this.client.discovery.invalidate(`${spec?.group}/${v.name}`);
  }
}

function isCrd(kind: KindRef): boolean {
  return kind.kind === 'CustomResourceDefinition' && groupOf(kind.apiVersion) === 'apiextensions.k8s.io';
}

/** JSON with object keys sorted, so equal manifests hash equally whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
