// The controller loop: informer events become keys in a work queue; workers hand each key
// to the reconciler, one at a time per key. Reconciles are level-triggered: the key is
// all a reconciler gets, it reads the rest from the caches.
import { systemClock, type Clock } from './clock.js';
import { ConflictError, toKubeError } from './errors.js';
import type { WatchSource } from './informer.js';
import { waitForAllSynced } from './informer-sync.js';
import { groupOf, objectKey, type KubeObject } from './kube-object.js';
import { stderrLogger, type Logger } from './logger.js';
import { onlyManagedBy } from './managed-fields.js';
import type { RateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

export interface ReconcileContext {
  /** Aborted when the controller stops and its drain deadline has passed. */
  signal: AbortSignal;
  /** Failed attempts for this key since its last success (for a `retryCount` in status). */
  retries: number;
}

/** Done (void), or done and look again after a delay. */
export interface ReconcileResult {
  requeueAfter?: number;
}

/**
 * Brings the object named by `key` (`namespace/name`, or `name` if cluster-scoped) to
 * its desired state. Throwing retries the key with per-key exponential backoff; a
 * `ConflictError` (409) retries it at once.
 */
export interface Reconciler {
  reconcile(key: string, context: ReconcileContext): Promise<ReconcileResult | void>;
}

export type ReconcileOutcome = 'success' | 'requeue' | 'conflict' | 'error';

/** Where the controller reports what it does (e.g. Prometheus metrics). */
export interface ControllerMetrics {
  /** A reconcile finished, how, and how long it took. */
  reconcileFinished(controller: string, outcome: ReconcileOutcome, durationMs: number): void;
  /** Keys waiting in the queue. */
  queueDepth(controller: string, depth: number): void;
  /** A key was put back with backoff after an error. */
  retried(controller: string): void;
}

export const noMetrics: ControllerMetrics = {
  reconcileFinished: () => {},
  queueDepth: () => {},
  retried: () => {},
};

/** Decides whether an informer event of the primary kind enqueues its key. */
export type EventFilter<T extends KubeObject> = (event: { type: 'add' | 'update' | 'delete'; object: T; old?: T }) => boolean;

/** Only spec changes (a new `metadata.generation`) and adds/deletes; ignores status-only updates. */
export const generationChanged: EventFilter<KubeObject> = (e) =>
  e.type !== 'update' || e.old?.metadata.generation !== e.object.metadata.generation;

/** Which event of an owned or watched object `ControllerOptions.ignore` is asked about. */
export type WatchEventType = 'add' | 'update' | 'delete';

/**
 * An `ignore` for the objects the controller's own client created (`fieldManager`), as their
 * creation comes back by the watch while no one else has written them: the reconcile that
 * created one has acted on it, so its ADDED event brings nothing new.
 */
export function createdBy(fieldManager: string): (obj: KubeObject, event: WatchEventType) => boolean {
  return (obj, event) => event === 'add' && onlyManagedBy(obj, fieldManager);
}

/** Maps an object of a watched kind to the keys of primary objects to reconcile. */
export interface Watch {
  informer: WatchSource;
  map(obj: KubeObject): string[];
}

export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in logs and metrics. */
  name: string;
  /** The primary kind: its adds, updates and deletes enqueue its key. */
  for: WatchSource<T>;
  /** Filters the primary kind's events (default: all). */
  filter?: EventFilter<T>;
  /** Kinds whose objects have the primary object as controlling owner: their events enqueue the owner's key. */
  owns?: WatchSource[];
  /** Other kinds, with a mapping to primary keys. */
  watches?: Watch[];
  /**
   * Owned and watched objects whose events wake nothing (the primary kind's own events still
   * do): e.g. those of a namespace being deleted, which the namespace controller deletes one by
   * one while a reconcile can do nothing there, or the creations the reconciler made itself.
   * An update asks for the old object and the new one; either not ignored wakes.
   */
  ignore?: (obj: KubeObject, event: WatchEventType) => boolean;
  reconciler: Reconciler;
  /** Parallel workers (default 2). A key is never processed by two at once. */
  workers?: number;
  /** Re-enqueue every primary object this often (default 10 min; 0 disables). */
  resyncPeriodMs?: number;
  rateLimiter?: RateLimiter;
  metrics?: ControllerMetrics;
  logger?: Logger;
  clock?: Clock;
}

export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  /** This run's queue and abort; a restart (leadership regained) gets new ones. */
  private queue: WorkQueue;
  private abort = new AbortController();
  private readonly logger: Logger;
  private readonly metrics: ControllerMetrics;
  private readonly clock: Clock;
  private readonly unsubscribe: (() => void)[] = [];
  private workers: Promise<void>[] = [];
  private resyncTimer: ReturnType<typeof setInterval> | undefined;
  private state: 'new' | 'running' | 'stopped' = 'new';

  constructor(private readonly options: ControllerOptions<T>) {
    this.name = options.name;
    this.logger = options.logger ?? stderrLogger;
    this.metrics = options.metrics ?? noMetrics;
    this.clock = options.clock ?? systemClock;
    this.queue = this.newQueue();
  }

  /**
   * Subscribes to the informers, waits until their caches are synced, then enqueues every
   * primary object and starts the workers. Informers must have been started. A stopped
   * controller may start again (a replica that lost the lease and won it back): once the
   * previous run's reconciles have ended, it starts afresh with every primary object queued.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.state === 'running') throw new Error(`controller ${this.name} is already running`);
    if (this.state === 'stopped') {
      this.state = 'running';
      // A key is never reconciled twice at once, not even across two runs.
      await Promise.all(this.workers.splice(0));
      if (this.state !== 'running') return;
      this.queue = this.newQueue();
      this.abort = new AbortController();
    }
    this.state = 'running';
    const o = this.options;
    const informers = [o.for, ...(o.owns ?? []), ...(o.watches ?? []).map((w) => w.informer)];
    await waitForAllSynced(informers, signal);
    if (this.state !== 'running') return;

    const filter = o.filter ?? (() => true);
    this.unsubscribe.push(
      o.for.addHandler({
        onAdd: (obj) => filter({ type: 'add', object: obj }) && this.enqueue(objectKey(obj)),
        onUpdate: (old, obj) => filter({ type: 'update', object: obj, old }) && this.enqueue(objectKey(obj)),
        onDelete: (obj) => filter({ type: 'delete', object: obj }) && this.enqueue(objectKey(obj)),
      }),
    );
    for (const owned of o.owns ?? []) this.watchMapped(owned, (obj) => this.ownerKeys(obj));
    for (const w of o.watches ?? []) this.watchMapped(w.informer, (obj) => w.map(obj));

    const resyncMs = o.resyncPeriodMs ?? 600_000;
    if (resyncMs > 0) {
      this.resyncTimer = setInterval(() => {
        for (const obj of o.for.list()) this.enqueue(objectKey(obj));
      }, resyncMs);
      this.resyncTimer.unref();
    }
    for (let i = 0; i < (o.workers ?? 2); i++) this.workers.push(this.work(this.queue, this.abort.signal));
    this.logger.info({ controller: this.name, workers: o.workers ?? 2 }, 'controller started');
  }

  /** Asks for a reconcile of `key` (e.g. from a webhook). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Asks for a reconcile of `key` after `delayMs`. */
  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }

  /** Keys waiting for a worker. */
  queueDepth(): number {
    return this.queue.len();
  }

  /**
   * Stops taking keys and waits for in-flight reconciles, at most `drainDeadlineMs`; then
   * aborts their signal. Resolves true if everything in flight finished in time.
   */
  async stop(drainDeadlineMs = 30_000): Promise<boolean> {
    if (this.state === 'stopped') return true;
    this.state = 'stopped';
    clearInterval(this.resyncTimer);
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    const drained = await this.queue.shutDownWithDrain(drainDeadlineMs);
    if (!drained)
      this.logger.warn(
        { controller: this.name, inFlight: this.queue.inFlight() },
        'controller: drain deadline passed, aborting in-flight reconciles',
      );
    this.abort.abort(new Error(`controller ${this.name} stopped`));
    if (drained) await Promise.all(this.workers);
    return drained;
  }

  private watchMapped(informer: WatchSource, map: (obj: KubeObject) => string[]): void {
    const ignore = this.options.ignore ?? (() => false);
    const enqueueAll = (obj: KubeObject, event: WatchEventType) => {
      if (ignore(obj, event)) return;
      for (const key of map(obj)) this.enqueue(key);
    };
    this.unsubscribe.push(
      informer.addHandler({
        onAdd: (obj) => enqueueAll(obj, 'add'),
        // Both: an object that changed owner must wake the old owner and the new one.
        onUpdate: (old, obj) => {
          enqueueAll(old, 'update');
          enqueueAll(obj, 'update');
        },
        onDelete: (obj) => enqueueAll(obj, 'delete'),
      }),
    );
  }

  /** Keys of the primary objects that control `obj` (ownerReferences with controller: true). */
  private ownerKeys(obj: KubeObject): string[] {
    const primary = this.options.for;
    const namespaced = primary.resourceInfo()?.namespaced ?? true;
    const group = groupOf(primary.kind.apiVersion);
    return (obj.metadata.ownerReferences ?? [])
      .filter((ref) => ref.controller && ref.kind === primary.kind.kind && groupOf(ref.apiVersion) === group)
      .map((ref) => (namespaced ? `${obj.metadata.namespace ?? ''}/${ref.name}` : ref.name));
  }

  private newQueue(): WorkQueue {
    return new WorkQueue({
      rateLimiter: this.options.rateLimiter,
      clock: this.clock,
      onDepthChange: (depth) => this.metrics.queueDepth(this.name, depth),
    });
  }

  /** One worker of one run: its queue and signal, never a later run's. */
  private async work(queue: WorkQueue, signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      const started = this.clock.now();
      let outcome: ReconcileOutcome = 'success';
      try {
        const result = await this.options.reconciler.reconcile(key, { signal, retries: queue.numRequeues(key) });
        queue.forget(key);
        if (result?.requeueAfter !== undefined) {
          outcome = 'requeue';
          queue.addAfter(key, result.requeueAfter);
        }
      } catch (err) {
        const kubeErr = toKubeError(err);
        if (kubeErr instanceof ConflictError) {
          // Someone wrote the object since we read it: the watch brings the new version, try again now.
          outcome = 'conflict';
          this.logger.debug({ controller: this.name, key, err: kubeErr.message }, 'reconcile: conflict, retrying');
          queue.add(key);
        } else {
          outcome = 'error';
          this.logger.error(
            { controller: this.name, key, retries: queue.numRequeues(key), err: err instanceof Error ? err.message : String(err) },
            'reconcile failed',
          );
          queue.addRateLimited(key);
          this.metrics.retried(this.name);
        }
      } finally {
        queue.done(key);
        this.metrics.reconcileFinished(this.name, outcome, this.clock.now() - started);
      }
    }
  }
}
