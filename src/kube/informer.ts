// List, then watch from the list's resourceVersion, forever. client-node's informer stops
// for good on any error but 410 and sets no watch timeout, so this one is written out:
// bookmarks keep the resume point fresh; 410 relists (diffing against the cache, so no
// event is lost and none is repeated); any other error or a silent connection restarts
// the watch with backoff; a periodic relist repairs anything a watch could have missed.
import type { KubeClient } from './client.js';
import { resourcePath, type ResourceInfo } from './discovery.js';
import { errorFromResponse, ExpiredError, toKubeError, type ApiStatus } from './errors.js';
import { objectKey, type KindRef, type KubeObject } from './kube-object.js';
import { stderrLogger, type Logger } from './logger.js';
import { FieldSetInterner } from './field-set-interner.js';
import { compactManagedFields } from './managed-fields.js';
import { ObjectCache, type IndexFunction } from './object-cache.js';

/** Receives changes to the informer's objects. An update carries the old and the new object. */
export interface InformerHandler<T extends KubeObject = KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions {
  /** Watch one namespace only (default: all, or the kind is cluster-scoped). */
  namespace?: string;
  /** e.g. `app.kubernetes.io/managed-by=preview-operator`. */
  labelSelector?: string;
  fieldSelector?: string;
  /** Full relist period, repairing anything a watch missed (default 10 min; 0 disables). */
  relistIntervalMs?: number;
  /** A watch silent for this long is presumed dead and restarted (default 150 s; the server sends bookmarks about every minute). */
  watchdogMs?: number;
  /** Restart backoff after errors: first delay and cap (default 250 ms doubling to 15 s). */
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  logger?: Logger;
}

interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | ApiStatus;
}

/**
 * What a reconciler reads from an informer: its kind and its cache. `Informer` is one; a
 * reconciler's unit test hands it an in-memory one.
 */
export interface CacheReader<T extends KubeObject = KubeObject> {
  readonly kind: KindRef;
  get(key: string): T | undefined;
  lookup(key: string): T | 'absent' | undefined;
  list(namespace?: string): T[];
  /** The last resourceVersion its watch delivered (an Applier's `seen`: how far the cache has caught up). */
  lastResourceVersion?(): string;
}

/** What a controller needs of an informer: to wait for its first list, to list it and to hear of changes. */
export interface WatchSource<T extends KubeObject = KubeObject> {
  readonly kind: KindRef;
  waitForSync(signal?: AbortSignal): Promise<void>;
  addHandler(handler: InformerHandler<T>): () => void;
  list(namespace?: string): T[];
  resourceInfo(): ResourceInfo | undefined;
}

/** A watch that ended by itself (server timeout) rather than by an error. */
const watchEnded = Symbol('watch ended');

/** One for the process: the same field sets recur across kinds' caches and environments. */
const fieldSets = new FieldSetInterner();

export class Informer<T extends KubeObject = KubeObject> implements CacheReader<T>, WatchSource<T> {
  private readonly cache = new ObjectCache<T>();
  private readonly handlers = new Set<InformerHandler<T>>();
  private readonly syncWaiters: (() => void)[] = [];
  private readonly logger: Logger;
  private resource: ResourceInfo | undefined;
  private resourceVersion = '';
  private synced = false;
  private running = false;
  private loop: Promise<void> | undefined;
  private closeWatch: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private relistDue = false;
  /** Aborts the request in flight (list, or a watch still waiting for its answer) on stop. */
  private abort = new AbortController();
  private relistTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly client: KubeClient,
    readonly kind: KindRef,
    private readonly options: InformerOptions = {},
  ) {
    this.logger = options.logger ?? stderrLogger;
  }

  /** Subscribes to changes; objects already cached are replayed as adds. Returns an unsubscribe function. */
  addHandler(handler: InformerHandler<T>): () => void {
    this.handlers.add(handler);
    if (handler.onAdd) for (const obj of this.cache.list()) this.call(() => handler.onAdd!(obj));
    return () => this.handlers.delete(handler);
  }

  /** Adds a secondary index, queried with `byIndex`. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    this.cache.addIndex(name, fn);
  }

  /** Starts listing and watching in the background (idempotent). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    const relistMs = this.options.relistIntervalMs ?? 600_000;
    if (relistMs > 0) {
      this.relistTimer = setInterval(() => {
        this.relistDue = true;
        this.closeWatch?.();
      }, relistMs);
      this.relistTimer.unref();
    }
    this.loop = this.run();
  }

  /** Stops watching; the cache keeps its last content. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.relistTimer);
    this.abort.abort();
    this.closeWatch?.();
    this.wake?.();
    await this.loop;
  }

  /** True once the first full list has been loaded into the cache. */
  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the cache has been filled by the first list. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal!.reason ?? new Error('aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** How the server serves this kind (known once started and resolved). */
  resourceInfo(): ResourceInfo | undefined {
    return this.resource;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /**
   * A cached object by key (`namespace/name`, or `name` if cluster-scoped). Treat it as read-only. Its managedFields
   * hold the client's field manager's Apply entries whole and only the top of the others' (compactManagedFields),
   * as frozen field sets shared with other cached objects.
   */
  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  /**
   * For the Applier's `lookup`: the cached object, `'absent'` when the synced cache has none
   * (it holds every object its selector matches), or undefined before the first list.
   */
  lookup(key: string): T | 'absent' | undefined {
    return this.cache.get(key) ?? (this.synced ? 'absent' : undefined);
  }

  /** Cached objects, all or of one namespace. */
  list(namespace?: string): T[] {
    return this.cache.list(namespace);
  }

  /** Cached objects whose `label` is `value`. */
  byLabel(label: string, value: string): T[] {
    return this.cache.byLabel(label, value);
  }

  /** Cached objects with an ownerReference to `uid`. */
  byOwner(uid: string): T[] {
    return this.cache.byOwner(uid);
  }

  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  private async run(): Promise<void> {
    const initial = this.options.backoffInitialMs ?? 250;
    const max = this.options.backoffMaxMs ?? 15_000;
    let delay = initial;
    let needList = true;
    while (this.running) {
      try {
        this.resource ??= await this.client.resolve(this.kind);
        if (needList || this.relistDue) {
          this.relistDue = false;
          await this.listAndReplace();
          needList = false;
          delay = initial;
        }
        const started = Date.now();
        const delivered = await this.watch();
        // A watch the server ends at once, again and again, must not become a busy loop.
        if (delivered > 0 || this.relistDue || Date.now() - started > 10_000) {
          delay = initial;
        } else {
          await this.sleep(delay);
          delay = Math.min(max, delay * 2);
        }
      } catch (err) {
        if (!this.running) break;
        if (err instanceof ExpiredError) {
          this.logger.info({ kind: this.kind.kind, resourceVersion: this.resourceVersion }, 'informer: resourceVersion expired, relisting');
          needList = true;
          continue;
        }
        this.logger.warn({ kind: this.kind.kind, err: toKubeError(err).message, retryInMs: delay }, 'informer: watch failed, restarting');
        await this.sleep(delay);
        delay = Math.min(max, delay * 2);
        if (!this.resourceVersion) needList = true;
      }
    }
  }

  /** Lists everything and replaces the cache, emitting exactly the differences as events. */
  private async listAndReplace(): Promise<void> {
    const { items, resourceVersion } = await this.client.list<T>(this.kind, {
      namespace: this.options.namespace,
      labelSelector: this.options.labelSelector,
      fieldSelector: this.options.fieldSelector,
      signal: this.abort.signal,
    });
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.cache.get(key);
      if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) continue;
      this.cache.set(this.cached(obj));
      if (old) this.emitUpdate(old, obj);
      else this.emitAdd(obj);
    }
    for (const key of this.cache.keys()) {
      if (seen.has(key)) continue;
      const old = this.cache.delete(key)!;
      this.emitDelete(old);
    }
    this.resourceVersion = resourceVersion;
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  /** One watch connection; resolves with the number of events delivered when the server ends it. */
  private async watch(): Promise<number> {
    const watchdogMs = this.options.watchdogMs ?? 150_000;
    const stream = await this.client.stream({
      path: resourcePath(this.resource!, { namespace: this.options.namespace }),
      query: {
        watch: 1,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        // Like client-go: 5–10 min, so connections are recycled even if nothing else ends them.
        timeoutSeconds: 300 + Math.floor(Math.random() * 300),
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
      },
      signal: this.abort.signal,
    });
    let delivered = 0;
    return new Promise<number>((resolve, reject) => {
      let buffer = '';
      let finished = false;
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      const finish = (err?: unknown) => {
        if (finished) return;
        finished = true;
        clearTimeout(watchdog);
        this.closeWatch = undefined;
        stream.close();
        if (err !== undefined && err !== watchEnded) reject(err);
        else resolve(delivered);
      };
      // One timer, pushed back on every chunk (refresh: no new timer per chunk).
      const feed = () => {
        if (watchdog) watchdog.refresh();
        else watchdog = setTimeout(() => finish(new Error(`watch silent for ${watchdogMs} ms`)), watchdogMs);
      };
      this.closeWatch = () => finish(watchEnded);
      if (!this.running || this.relistDue) {
        finish(watchEnded);
        return;
      }
      feed();
      stream.body.setEncoding('utf8');
      stream.body.on('data', (chunk: string) => {
        if (finished) return;
        feed();
        buffer += chunk;
        let newline: number;
        while (!finished && (newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (!line) continue;
          try {
            if (this.handleEvent(JSON.parse(line) as WatchEvent)) delivered++;
          } catch (err) {
            finish(err);
          }
        }
      });
      stream.body.once('end', () => finish(watchEnded));
      stream.body.once('close', () => finish(watchEnded));
      stream.body.once('error', (err) => finish(toKubeError(err, 'watch')));
    });
  }

  /** Applies one watch event to the cache; true if a handler event was emitted. */
  private handleEvent(event: WatchEvent): boolean {
    if (event.type === 'ERROR') {
      const status = event.object as ApiStatus;
      throw errorFromResponse(status.code ?? 500, status, `watch ${this.kind.kind}`);
    }
    const obj = event.object as T;
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return false;
    obj.apiVersion ??= this.resource!.apiVersion;
    obj.kind ??= this.resource!.kind;
    const key = objectKey(obj);
    if (event.type === 'DELETED') {
      const old = this.cache.delete(key);
      if (!old) return false;
      this.emitDelete(obj);
      return true;
    }
    const old = this.cache.set(this.cached(obj));
    if (old) this.emitUpdate(old, obj);
    else this.emitAdd(obj);
    return true;
  }

  /** What the cache keeps of an object: managedFields only as far as they are read, shared (managed-fields.ts). */
  private cached(obj: T): T {
    return compactManagedFields(obj, this.client.fieldManager, fieldSets);
  }

  private emitAdd(obj: T): void {
    for (const h of this.handlers) if (h.onAdd) this.call(() => h.onAdd!(obj));
  }

  private emitUpdate(oldObj: T, newObj: T): void {
    for (const h of this.handlers) if (h.onUpdate) this.call(() => h.onUpdate!(oldObj, newObj));
  }

  private emitDelete(obj: T): void {
    for (const h of this.handlers) if (h.onDelete) this.call(() => h.onDelete!(obj));
  }

  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ kind: this.kind.kind, err }, 'informer: handler threw');
    }
  }

  /** Waits `ms` with ±20% jitter, or until stopped. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          this.wake = undefined;
          resolve();
        },
        ms * (0.8 + Math.random() * 0.4),
      );
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
