// What reconcilers and the runtime's helpers (Applier, EventRecorder, status, finalizers) need of
// the API server: the object verbs, discovery and raw GETs. `KubeClient` is the one that talks
// HTTPS; naming the need apart lets a reconciler's unit tests hand it an in-memory fake instead.
import type { DeleteOptions, HttpRequest, ListOptions, ListResult, PatchOptions, PatchType, WriteOptions } from './client.js';
import type { Discovery, ResourceInfo } from './discovery.js';
import type { KindRef, KubeObject, ObjectRef } from './kube-object.js';

export interface ObjectClient {
  /** The field manager recorded for every write unless a write names another. */
  readonly fieldManager: string;
  readonly discovery: Pick<Discovery, 'resolve' | 'has' | 'invalidate'>;
  /** How the server serves `kind` (throws `NoKindMatchError` if it does not). */
  resolve(kind: KindRef): Promise<ResourceInfo>;
  /** One request; resolves with the parsed JSON body. */
  request<T = unknown>(req: HttpRequest): Promise<T>;
  get<T extends KubeObject = KubeObject>(ref: ObjectRef, options?: { subresource?: string }): Promise<T>;
  list<T extends KubeObject = KubeObject>(kind: KindRef, options?: ListOptions): Promise<ListResult<T>>;
  create<T extends KubeObject = KubeObject>(obj: KubeObject, options?: WriteOptions): Promise<T>;
  apply<T extends KubeObject = KubeObject>(obj: KubeObject, options?: PatchOptions): Promise<T>;
  patch<T extends KubeObject = KubeObject>(ref: ObjectRef, type: PatchType, patch: unknown, options?: PatchOptions): Promise<T>;
  delete(ref: ObjectRef, options?: DeleteOptions): Promise<void>;
}
