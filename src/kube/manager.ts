// Owns the moving parts of an operator process: shared informers (started on every replica,
// so caches are warm when leadership changes), controllers and leader-only runnables
// (started only while this replica leads), and the leader election that decides which.
// Losing the lease stops the leader's work at once — in-flight reconciles are aborted, not
// drained, so that they end before another replica's lease can begin — and the replica becomes
// a candidate again. Everything else the process does (serving webhooks, their writes) goes on:
// an API server unreachable for longer than the renew deadline must not take intake down with it.
import type { KubeClient } from './client.js';
import { Controller, noMetrics, type ControllerMetrics, type ControllerOptions } from './controller.js';
import { Informer, type InformerOptions } from './informer.js';
import { waitForAllSynced } from './informer-sync.js';
import type { KindRef, KubeObject } from './kube-object.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';
import { stderrLogger, type Logger } from './logger.js';

/** Work that runs only on the leader (e.g. a periodic resync); `signal` aborts when it must stop. */
export interface Runnable {
  name: string;
  start(signal: AbortSignal): Promise<void> | void;
}

export type ManagerStopReason = 'stopped';

export interface ManagerOptions {
  client: KubeClient;
  /** Lease-based election; `false` runs controllers at once (one replica, tests, `--leader-elect=false`). */
  leaderElection: false | Omit<LeaderElectionOptions, 'onStartedLeading' | 'onStoppedLeading' | 'logger'>;
  /** How long `stop` waits for in-flight reconciles and runnables (default 30 s). */
  drainDeadlineMs?: number;
  logger?: Logger;
  metrics?: ControllerMetrics;
  /** Told when this replica starts or stops leading (e.g. for a metric or readiness). */
  onLeadershipChange?: (leading: boolean) => void;
}

/** What the manager does with an informer, whatever its objects' type: start, stop, wait for it. */
type InformerLifecycle = Pick<Informer, 'start' | 'stop' | 'hasSynced' | 'waitForSync'>;

/** What the manager does with a controller, whatever its primary kind. */
type ControllerLifecycle = Pick<Controller, 'name' | 'start' | 'stop'>;

/** One informer per kind, namespace and selectors. */
function informerKey(kind: KindRef, options: Omit<InformerOptions, 'logger'>): string {
  return JSON.stringify([kind.apiVersion, kind.kind, options.namespace ?? '', options.labelSelector ?? '', options.fieldSelector ?? '']);
}

/**
 * The shared informer found under a kind's key is the `Informer` made for that kind. Its objects
 * are the `T` its callers name for the kind, as `client.get<T>` returns them.
 */
function isInformerOf<T extends KubeObject>(informer: unknown, kind: KindRef): informer is Informer<T> {
  return informer instanceof Informer && informer.kind.apiVersion === kind.apiVersion && informer.kind.kind === kind.kind;
}

export class Manager {
  private readonly informers = new Map<string, InformerLifecycle>();
  private readonly controllers: ControllerLifecycle[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly logger: Logger;
  private readonly elector: LeaderElector | undefined;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** While leading: what runs, and how to abort it. */
  private leadership: { abort: AbortController; running: Promise<unknown>[] } | undefined;
  /** Stopping the leader's work (lost, or a graceful stop), once at a time. */
  private steppingDown: Promise<void> | undefined;
  private resolveDone!: (reason: ManagerStopReason) => void;
  /** Resolves when the manager has stopped, and why. */
  readonly done: Promise<ManagerStopReason>;

  constructor(private readonly options: ManagerOptions) {
    this.logger = options.logger ?? stderrLogger;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    if (options.leaderElection) {
      this.elector = new LeaderElector(options.client, {
        ...options.leaderElection,
        logger: this.logger,
        onStartedLeading: () => this.startLeading(),
        onStoppedLeading: () => {
          if (this.state === 'running') void this.standBy();
        },
      });
    }
  }

  get client(): KubeClient {
    return this.options.client;
  }

  /** This replica's identity in the election (undefined without election). */
  get identity(): string | undefined {
    return this.elector?.identity;
  }

  /**
   * The shared informer for a kind (one per kind, namespace and selectors): every
   * controller watching the same objects shares one watch and one cache.
   */
  informer<T extends KubeObject = KubeObject>(kind: KindRef, options: Omit<InformerOptions, 'logger'> = {}): Informer<T> {
    const key = informerKey(kind, options);
    const shared = this.informers.get(key);
    if (isInformerOf<T>(shared, kind)) return shared;
    const informer = new Informer<T>(this.options.client, kind, { ...options, logger: this.logger });
    this.informers.set(key, informer);
    if (this.state === 'running') informer.start();
    return informer;
  }

  /** Whether a controller registered before asked for `informer(kind, options)` (a later one may share that wider cache). */
  hasInformer(kind: KindRef, options: Omit<InformerOptions, 'logger'> = {}): boolean {
    return this.informers.has(informerKey(kind, options));
  }

  /** Adds a controller, started when this replica leads. Add controllers before `start`. */
  addController<T extends KubeObject>(options: Omit<ControllerOptions<T>, 'logger' | 'metrics'>): Controller<T> {
    if (this.state !== 'new') throw new Error('add controllers before starting the manager');
    const controller = new Controller<T>({ ...options, logger: this.logger, metrics: this.options.metrics ?? noMetrics });
    this.controllers.push(controller);
    return controller;
  }

  /** Adds work that runs only while this replica leads. Add runnables before `start`. */
  addRunnable(runnable: Runnable): void {
    if (this.state !== 'new') throw new Error('add runnables before starting the manager');
    this.runnables.push(runnable);
  }

  /** Starts the informers and the election (or, without election, the controllers). Returns at once. */
  start(): void {
    if (this.state !== 'new') throw new Error('the manager was already started');
    this.state = 'running';
    for (const informer of this.informers.values()) informer.start();
    if (this.elector) this.elector.start();
    else this.startLeading();
  }

  /** True when every informer has loaded its first list (for a readiness probe). */
  hasSynced(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  async waitForCacheSync(signal?: AbortSignal): Promise<void> {
    await waitForAllSynced([...this.informers.values()], signal);
  }

  isLeader(): boolean {
    return this.leadership !== undefined;
  }

  /**
   * Graceful stop: controllers drain in-flight reconciles (up to the deadline), runnables
   * are aborted, then the lease is released so another replica takes over at once.
   */
  async stop(): Promise<void> {
    if (this.state === 'new') {
      this.state = 'stopped';
      this.resolveDone('stopped');
      return;
    }
    await this.shutdown('stopped');
  }

  private startLeading(): void {
    if (this.state !== 'running' || this.leadership || this.steppingDown) return;
    const abort = new AbortController();
    const running: Promise<unknown>[] = [];
    this.leadership = { abort, running };
    this.options.onLeadershipChange?.(true);
    this.logger.info(
      { identity: this.identity, controllers: this.controllers.map((c) => c.name) },
      'manager: leading, starting controllers',
    );
    const signal = abort.signal;
    for (const controller of this.controllers) {
      running.push(
        controller.start(signal).catch((err) => {
          if (!signal.aborted) this.logger.error({ controller: controller.name, err }, 'manager: controller failed to start');
        }),
      );
    }
    for (const runnable of this.runnables) {
      running.push(
        Promise.resolve()
          .then(() => runnable.start(signal))
          .catch((err) => {
            if (!signal.aborted) this.logger.error({ runnable: runnable.name, err }, 'manager: runnable failed');
          }),
      );
    }
  }

  /**
   * The lease is lost: the controllers and runnables stop now (in-flight reconciles aborted,
   * not drained: another replica may lead once the lease has expired), then this replica
   * campaigns again. Informers keep running, so a regained lease starts on warm caches.
   */
  private async standBy(): Promise<void> {
    this.logger.warn({ identity: this.identity }, 'manager: lost the lease; reconciling stops, this replica campaigns again');
    await this.stepDown(0);
    if (this.state === 'running') this.elector?.start();
  }

  /** Stops the leader's work: controllers drain within `deadlineMs` (0: abort at once), runnables are aborted. */
  private stepDown(deadlineMs: number): Promise<void> {
    this.steppingDown ??= (async () => {
      const leadership = this.leadership;
      if (!leadership) return;
      const drained = Promise.all(this.controllers.map((c) => c.stop(deadlineMs)));
      leadership.abort.abort(new Error('manager: no longer leading'));
      await drained;
      const grace = Math.max(deadlineMs, 5_000);
      await Promise.race([Promise.all(leadership.running), new Promise((r) => setTimeout(r, grace).unref())]);
      this.leadership = undefined;
      this.options.onLeadershipChange?.(false);
    })().finally(() => (this.steppingDown = undefined));
    return this.steppingDown;
  }

  private async shutdown(reason: ManagerStopReason): Promise<void> {
    if (this.state !== 'running') {
      await this.done;
      return;
    }
    this.state = 'stopping';
    const deadline = this.options.drainDeadlineMs ?? 30_000;
    this.logger.info({ reason }, 'manager: stopping');
    // A step-down already under way (the lease was just lost) finishes first.
    await this.steppingDown;
    await this.stepDown(deadline);
    // Only now, with our loops stopped, may another replica lead.
    await this.elector?.stop();
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    this.state = 'stopped';
    this.resolveDone(reason);
  }
}
