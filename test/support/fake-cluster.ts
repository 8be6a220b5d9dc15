// An in-memory API server for reconcilers' unit tests: `client()` is the ObjectClient a
// reconciler writes through, `informer()` a cache it reads, both over one store. It keeps what
// reconcilers rely on — server-side apply with field managers (fake-field-managers.ts), the
// status subresource, uid, generation and resourceVersion, owner references (deleting an owner
// deletes what it owns), delete preconditions and finalizers, the typed errors — and records
// every write. Workload controllers are not simulated: a test says when a workload is rolled out
// (`rollOut`). Stored objects are frozen, so a reconciler that edits what a cache gave it throws.
// Integration tests use the real API server; this is for running a reconcile in milliseconds.
import {
  NoKindMatchError,
  errorFromResponse,
  groupOf,
  identityOf,
  jsonEqual,
  refOf,
  type DeleteOptions,
  type HttpRequest,
  type KindRef,
  type KubeError,
  type KubeObject,
  type ListOptions,
  type ListResult,
  type ObjectClient,
  type ObjectRef,
  type PatchOptions,
  type PatchType,
  type ResourceInfo,
  type WriteOptions,
  type CacheReader,
} from '../../src/kube/index.js';
import { customMetricsApiPath } from '../../src/controllers/algorithm-autoscaling.js';
import { deepFreeze } from '../../src/synth/deep-freeze.js';
import { applyFields, fieldSetOf, isPlainObject, mergeInto, updateFields } from './fake-field-managers.js';

/** One write the fake API server accepted. */
export interface RecordedWrite {
  verb: 'create' | 'apply' | 'patch' | 'delete';
  kind: string;
  namespace?: string;
  name: string;
  subresource?: string;
  fieldManager: string;
  dryRun: boolean;
}

/** Decides whether a write is refused, and with which error (a quota, an admission webhook…). */
export type WriteRefusal = (write: RecordedWrite, object: KubeObject | undefined) => KubeError | undefined;

const clusterScoped = new Set([
  'Namespace',
  'PreviewEnvironment',
  'ClusterRole',
  'ClusterRoleBinding',
  'ClusterIssuer',
  'CustomResourceDefinition',
]);

export class FakeCluster {
  readonly writes: RecordedWrite[] = [];
  /** Pod metrics the custom metrics API serves (`pods/<metric>`); undefined: the API is not served. */
  customMetrics: string[] | undefined;
  /** Kinds discovery does not serve, as `apiVersion/kind`. */
  readonly unserved = new Set<string>();
  private readonly objects = new Map<string, KubeObject>();
  private readonly refusals = new Set<WriteRefusal>();
  private version = 0;
  private uids = 0;

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** The last resourceVersion written (what a watch that has seen everything stands at). */
  currentVersion(): string {
    return String(this.version);
  }

  /** A client writing as `fieldManager`. */
  client(fieldManager = 'preview-operator'): FakeClient {
    return new FakeClient(this, fieldManager);
  }

  /** A cache of `kind` (all namespaces), optionally of objects matching `labelSelector` only. */
  informer(kind: KindRef, options: { labelSelector?: string } = {}): FakeInformer {
    return new FakeInformer(this, kind, options.labelSelector);
  }

  /** Refuses the writes `refusal` picks until the returned function is called. */
  refuse(refusal: WriteRefusal): () => void {
    this.refusals.add(refusal);
    return () => this.refusals.delete(refusal);
  }

  get(ref: ObjectRef): KubeObject | undefined {
    return this.objects.get(identityOf(ref));
  }

  /** Objects of `kind`, of one namespace or all. */
  list(kind: KindRef, namespace?: string): KubeObject[] {
    const group = groupOf(kind.apiVersion);
    return [...this.objects.values()].filter(
      (o) => o.kind === kind.kind && groupOf(o.apiVersion) === group && (namespace === undefined || o.metadata.namespace === namespace),
    );
  }

  /** The Events recorded so far, as `type reason: message`. */
  events(): string[] {
    return this.list({ apiVersion: 'v1', kind: 'Event' }).map((e) => `${String(e.type)} ${String(e.reason)}: ${String(e.message)}`);
  }

  /** Writes from `mark` (a `writes.length` taken earlier) on, as `verb Kind name[/subresource]`. */
  writesSince(mark: number): string[] {
    return this.writes.slice(mark).map((w) => `${w.verb} ${w.kind} ${w.name}${w.subresource ? `/${w.subresource}` : ''}`);
  }

  /** What a workload controller reports once every replica of the current spec is ready. */
  rollOut(ref: ObjectRef): void {
    const live = this.require(ref, 'rollOut');
    const replicas = (live.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    const status = {
      observedGeneration: live.metadata.generation,
      replicas,
      readyReplicas: replicas,
      updatedReplicas: replicas,
      availableReplicas: replicas,
      ...(live.kind === 'StatefulSet' ? { currentRevision: 'r1', updateRevision: 'r1' } : {}),
    };
    this.store({ ...live, status });
  }

  // ---- the server's side of the client's verbs -------------------------------------------

  resolve(kind: KindRef): ResourceInfo {
    if (this.unserved.has(`${kind.apiVersion}/${kind.kind}`)) throw new NoKindMatchError(kind.apiVersion, kind.kind);
    const group = groupOf(kind.apiVersion);
    return {
      apiVersion: kind.apiVersion,
      group,
      version: group ? kind.apiVersion.slice(group.length + 1) : kind.apiVersion,
      kind: kind.kind,
      resource: `${kind.kind.toLowerCase()}s`,
      namespaced: !clusterScoped.has(kind.kind),
      verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'],
      subresources: ['status'],
    };
  }

  create(obj: KubeObject, manager: string, options: WriteOptions): KubeObject {
    const fieldManager = options.fieldManager ?? manager;
    this.admit({ verb: 'create', ...this.where(obj), fieldManager, dryRun: !!options.dryRun }, obj);
    if (this.get(refOf(obj))) throw fail(409, 'AlreadyExists', `${obj.kind} ${obj.metadata.name} already exists`);
    // Status is not written on create; a Secret's stringData is folded into data.
    const { status: _status, ...content } = withSecretData(obj);
    const fieldsV1 = fieldSetOf(content);
    const entry = { manager: fieldManager, operation: 'Update' as const, apiVersion: obj.apiVersion, fieldsType: 'FieldsV1', fieldsV1 };
    const created = { ...content, metadata: { ...content.metadata, managedFields: [entry] } };
    return options.dryRun ? created : this.store(this.fresh(created));
  }

  apply(obj: KubeObject, manager: string, options: PatchOptions): KubeObject {
    const fieldManager = options.fieldManager ?? manager;
    this.admit({ verb: 'apply', ...this.where(obj), fieldManager, dryRun: !!options.dryRun }, obj);
    const live = this.get(refOf(obj));
    const applied = applyFields(live, obj, fieldManager);
    if (options.dryRun) return applied;
    return this.store(live ? this.changed(live, applied) : this.fresh(applied));
  }

  patch(ref: ObjectRef, type: PatchType, patch: unknown, manager: string, options: PatchOptions): KubeObject {
    const fieldManager = options.fieldManager ?? manager;
    const write = { verb: 'patch' as const, ...this.where(ref), subresource: options.subresource, fieldManager, dryRun: !!options.dryRun };
    const live = this.require(ref, 'patch');
    this.admit(write, live);
    if (type !== 'merge' || !isPlainObject(patch)) throw new Error(`the fake API server takes merge patches only, not ${type}`);
    const next =
      options.subresource === 'status'
        ? { ...live, status: mergeInto(isPlainObject(live.status) ? live.status : {}, isPlainObject(patch.status) ? patch.status : {}) }
        : updateFields(live, patch, fieldManager);
    return options.dryRun ? next : this.store(this.changed(live, next));
  }

  delete(ref: ObjectRef, manager: string, options: DeleteOptions): void {
    const live = this.require(ref, 'delete');
    this.admit({ verb: 'delete', ...this.where(ref), fieldManager: manager, dryRun: !!options.dryRun }, live);
    if (options.preconditions?.uid && options.preconditions.uid !== live.metadata.uid) {
      throw fail(409, 'Conflict', `precondition failed: uid ${options.preconditions.uid}, object has ${live.metadata.uid}`);
    }
    if (options.dryRun) return;
    // The API server's namespace storage accepts a second delete while the namespace is emptied, and changes nothing.
    if (ref.kind === 'Namespace' && live.metadata.deletionTimestamp) return;
    if (live.metadata.finalizers?.length) {
      this.store({ ...live, metadata: { ...live.metadata, deletionTimestamp: this.now().toISOString() } });
      return;
    }
    this.objects.delete(identityOf(ref));
    // The garbage collector, at once: what the object owned goes with it.
    for (const dependent of [...this.objects.values()]) {
      if (dependent.metadata.ownerReferences?.some((o) => o.uid === live.metadata.uid) && this.get(refOf(dependent))) {
        this.delete(refOf(dependent), 'generic-garbage-collector', {});
      }
    }
  }

  require(ref: ObjectRef, what: string): KubeObject {
    const live = this.get(ref);
    if (!live) throw fail(404, 'NotFound', `${what}: ${ref.kind} ${ref.namespace ?? ''}/${ref.name} not found`);
    return live;
  }

  private where(ref: ObjectRef | KubeObject): Pick<RecordedWrite, 'kind' | 'namespace' | 'name'> {
    const r = 'metadata' in ref ? refOf(ref) : ref;
    return { kind: r.kind, namespace: r.namespace, name: r.name };
  }

  /** Records the write, unless a refusal turns it down. */
  private admit(write: RecordedWrite, object: KubeObject | undefined): void {
    for (const refusal of this.refusals) {
      const error = refusal(write, object);
      if (error) throw error;
    }
    this.writes.push(write);
  }

  /** A new object: what the server sets on create. */
  private fresh(obj: KubeObject): KubeObject {
    const metadata = { ...obj.metadata, uid: `uid-${++this.uids}`, generation: 1, creationTimestamp: this.now().toISOString() };
    return { ...obj, metadata };
  }

  /** `next` as the server keeps it: a new generation when more than metadata and status changed. */
  private changed(live: KubeObject, next: KubeObject): KubeObject {
    const { metadata: _a, status: _b, ...before } = live;
    const { metadata: _c, status: _d, ...after } = next;
    const generation = (live.metadata.generation ?? 1) + (jsonEqual(before, after) ? 0 : 1);
    return { ...next, metadata: { ...next.metadata, uid: live.metadata.uid, generation } };
  }

  /** Keeps `obj` (frozen) under a new resourceVersion, unless nothing changed. */
  private store(obj: KubeObject): KubeObject {
    const previous = this.get(refOf(obj));
    const unversioned = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
    if (previous && jsonEqual(unversioned(previous), unversioned(obj))) return structuredClone(previous);
    const stored = deepFreeze(structuredClone({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.version) } }));
    this.objects.set(identityOf(stored), stored);
    return structuredClone(stored);
  }
}

/** The ObjectClient over a FakeCluster. */
export class FakeClient implements ObjectClient {
  readonly discovery = {
    resolve: async (kind: KindRef) => this.cluster.resolve(kind),
    has: async (kind: KindRef) => !this.cluster.unserved.has(`${kind.apiVersion}/${kind.kind}`),
    invalidate: () => {},
  };

  constructor(
    readonly cluster: FakeCluster,
    readonly fieldManager: string,
  ) {}

  async resolve(kind: KindRef): Promise<ResourceInfo> {
    return this.cluster.resolve(kind);
  }

  /** Raw GETs: the custom metrics API's resource list, when `customMetrics` is set; 404 for anything else. */
  async request<T = unknown>(req: HttpRequest): Promise<T> {
    const metrics = this.cluster.customMetrics;
    if (req.path === customMetricsApiPath && metrics) return { resources: metrics.map((m) => ({ name: `pods/${m}` })) } as T;
    throw fail(404, 'NotFound', `GET ${req.path}: not served by the fake API server`);
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    return structuredClone(this.cluster.require(ref, 'get')) as T;
  }

  async list<T extends KubeObject = KubeObject>(kind: KindRef, options: ListOptions = {}): Promise<ListResult<T>> {
    const items = this.cluster.list(kind, options.namespace).filter((o) => matches(o, options.labelSelector));
    return { items: structuredClone(items) as T[], resourceVersion: '0' };
  }

  async create<T extends KubeObject = KubeObject>(obj: KubeObject, options: WriteOptions = {}): Promise<T> {
    return this.cluster.create(obj, this.fieldManager, options) as T;
  }

  async apply<T extends KubeObject = KubeObject>(obj: KubeObject, options: PatchOptions = {}): Promise<T> {
    return this.cluster.apply(obj, this.fieldManager, options) as T;
  }

  async patch<T extends KubeObject = KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, options: PatchOptions = {}): Promise<T> {
    return this.cluster.patch(ref, type, patch, this.fieldManager, options) as T;
  }

  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<void> {
    this.cluster.delete(ref, this.fieldManager, options);
  }
}

/**
 * A synced informer's cache of one kind over a FakeCluster. `hold()` freezes what it shows (an
 * informer that has not seen the latest events yet) until `release()`.
 */
export class FakeInformer implements CacheReader {
  private held: Map<string, KubeObject> | undefined;
  private heldAt = '0';

  constructor(
    private readonly cluster: FakeCluster,
    readonly kind: KindRef,
    private readonly labelSelector?: string,
  ) {}

  hold(): void {
    this.held = new Map(this.current().map((o) => [key(o), o]));
    this.heldAt = this.cluster.currentVersion();
  }

  /** Where its watch stands: the cluster's last write, or the moment it was held. */
  lastResourceVersion(): string {
    return this.held ? this.heldAt : this.cluster.currentVersion();
  }

  release(): void {
    this.held = undefined;
  }

  get(k: string): KubeObject | undefined {
    return this.held ? this.held.get(k) : this.current().find((o) => key(o) === k);
  }

  lookup(k: string): KubeObject | 'absent' {
    return this.get(k) ?? 'absent';
  }

  list(namespace?: string): KubeObject[] {
    const all = this.held ? [...this.held.values()] : this.current();
    return all.filter((o) => namespace === undefined || o.metadata.namespace === namespace);
  }

  private current(): KubeObject[] {
    return this.cluster.list(this.kind).filter((o) => matches(o, this.labelSelector));
  }
}

function key(obj: KubeObject): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

/** Label selectors of the forms `key`, `!key`, `key=value` and `key!=value`, comma-separated. */
function matches(obj: KubeObject, selector: string | undefined): boolean {
  const labels = obj.metadata.labels ?? {};
  return (selector ?? '')
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split(/!?=/) as [string, string | undefined];
      if (term.startsWith('!')) return !(term.slice(1) in labels);
      if (v === undefined) return k in labels;
      return term.includes('!=') ? labels[k] !== v : labels[k] === v;
    });
}

/** The typed error the real client would throw for this answer. */
export function fail(code: number, reason: string, message: string, causes?: { reason: string }[]): KubeError {
  return errorFromResponse(code, { kind: 'Status', status: 'Failure', reason, message, code, details: { causes } }, 'fake API server');
}

/** A Secret's stringData folded into data, as the API server does. */
function withSecretData(obj: KubeObject): KubeObject {
  if (obj.apiVersion !== 'v1' || obj.kind !== 'Secret' || !isPlainObject(obj.stringData)) return obj;
  const { stringData, ...rest } = obj;
  const data: Record<string, string> = { ...(isPlainObject(obj.data) ? (obj.data as Record<string, string>) : {}) };
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  return { ...rest, data };
}
