// The Algorithm reconciler, a recipe of named steps (as the Flux Operator's fetch → build →
// apply → finalize status): observe the Algorithm's workloads in the caches, decide the rollout
// (canary analysis, algorithm-canary.ts), build the desired objects with the constructs, apply
// them and prune the rest (algorithm-apply.ts), tell what happened (Warnings as Events, routine
// steps as log lines), write the status (algorithm-status.ts) — pure progress paced, decisions at
// once (algorithm-status-pacing.ts). Every decision is taken from the Algorithm and its status, so
// a restarted operator picks a canary up where it was. Wiring: algorithm-controller.ts.
import {
  algorithmObjectNames,
  defaultLatencyMetric,
  isAlgorithm,
  ownershipLabelKeys,
  type AlgorithmResource,
  type AlgorithmStatus,
  type AlgorithmWorkloadOptions,
} from '../../constructs/index.js';
import {
  EventRecorder,
  ForbiddenError,
  InvalidError,
  NotFoundError,
  OwnWrites,
  controllerReference,
  isControlledBy,
  isDeleted,
  objectKey,
  refOf,
  silentLogger,
  toKubeError,
  updateStatus,
  type CacheReader,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../kube/index.js';
import { CustomMetricsProbe, decideAutoscaling, type AutoscalingDecision } from './algorithm-autoscaling.js';
import { CanaryAnalysis, type AlgorithmAnalysisOptions } from './algorithm-canary.js';
import { WorkloadWriter } from './algorithm-apply.js';
import {
  algorithmStatus,
  rolloutEvents,
  stampReconciled,
  statusChanged,
  type AlgorithmEvent,
  type Rollout,
  type TrafficSplit,
} from './algorithm-status.js';
import { AlgorithmWorkloadMemo } from './algorithm-workload-memo.js';
import { lastWrittenBy, statusWait } from './algorithm-status-pacing.js';
import { defaultProgressIntervalMs } from './progress-pacer.js';
import { httpRouteKind, renderTrafficRoute, type RouteParentRef } from './canary-traffic-route.js';
import { createsAny, ensureNamespaceActive, NamespaceTerminatingError, namespaceTerminating } from './namespace-terminating.js';
import { canaryReplicas } from './rollout-plan.js';
import { summarizeWorkload, type WorkloadSummary } from './rollout-workload-status.js';

export interface AlgorithmControllerOptions {
  /** @default silent */
  logger?: Logger;
  /** Where Events go. @default a recorder on the manager's client, component `preview-operator` */
  events?: EventRecorder;
  analysis?: AlgorithmAnalysisOptions;
  /** The per-pod custom metric the HPA targets for `scaling.targetLatencyMs`. @default 'request_latency_milliseconds' */
  latencyMetric?: string;
  /**
   * Split canary traffic with a Gateway API HTTPRoute (exact weights) when the cluster serves
   * `gateway.networking.k8s.io/v1` HTTPRoute; otherwise (or when false) by replica ratio.
   * `parentRefs` default to the algorithm's Service (GAMMA mesh binding). @default false
   */
  gatewayApi?: boolean | { parentRefs?: RouteParentRef[] };
  /** Watch one namespace only. @default all namespaces */
  namespace?: string;
  /** Parallel reconciles. @default 4 */
  workers?: number;
  /** Reconcile every Algorithm this often even without events. @default 600_000 */
  resyncPeriodMs?: number;
  /** How long the custom metrics API check is cached. @default 60_000 */
  customMetricsCacheMs?: number;
  /** Workload settings passed to the renderer (port, resources, probes, security). @default the renderer's */
  workload?: Pick<
    AlgorithmWorkloadOptions,
    'containerPort' | 'resources' | 'runAsUser' | 'readOnlyRootFilesystem' | 'readinessPath' | 'cpuTargetUtilization'
  >;
  /**
   * Pure progress of a rollout (Pending, Progressing, replica counts) is written only once the
   * rollout has had this long since its workloads were applied, and at most once per interval
   * after; a rollout done sooner writes Running alone. 0 writes every change. @default 10_000
   */
  progressIntervalMs?: number;
  /** @default () => new Date() */
  now?: () => Date;
}

/** The caches the reconciler reads: the Algorithms, and the kinds their workloads are made of. */
export interface AlgorithmInformers {
  algorithms: CacheReader;
  deployments: CacheReader;
  services: CacheReader;
  autoscalers: CacheReader;
  budgets: CacheReader;
  configMaps: CacheReader;
  /** The namespaces: nothing is written into one being deleted. */
  namespaces?: CacheReader;
}

/** What the caches say about one Algorithm's workloads. */
interface Observed {
  /** The status before this reconcile. */
  status: AlgorithmStatus;
  /** The stable Deployment, when the Algorithm controls it. */
  stableLive: KubeObject | undefined;
  stable: WorkloadSummary | undefined;
  canary: WorkloadSummary | undefined;
}

/** The objects to apply, and what they were built from. */
interface Desired {
  objects: KubeObject[];
  routed: boolean;
  weight: number;
  /** How the canary's traffic is split, when one runs. */
  split?: TrafficSplit;
  autoscaling: AutoscalingDecision;
  initialReplicas: number;
}

export class AlgorithmReconciler implements Reconciler {
  private readonly logger: Logger;
  private readonly events: EventRecorder;
  private readonly writer: WorkloadWriter;
  private readonly probe: CustomMetricsProbe;
  /** Our status writes, fresher than the cache until its watch brings them (a reconcile must decide from the rollout's latest state). */
  private readonly memo: OwnWrites<AlgorithmResource>;
  private readonly workloads = new AlgorithmWorkloadMemo();
  private readonly analysis: CanaryAnalysis;
  private readonly now: () => Date;

  constructor(
    private readonly client: ObjectClient,
    private readonly informers: AlgorithmInformers,
    private readonly options: AlgorithmControllerOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.events = options.events ?? new EventRecorder(client, { component: 'preview-operator', logger: this.logger });
    const { deployments, services, autoscalers, budgets, configMaps } = informers;
    this.writer = new WorkloadWriter(client, [deployments, services, autoscalers, budgets, configMaps]);
    this.probe = new CustomMetricsProbe(client, options.customMetricsCacheMs ?? 60_000);
    this.analysis = new CanaryAnalysis(options.analysis);
    const { algorithms } = informers;
    // Held until the cache has the write, however long its watch takes: a rollout decided from an older status repeats steps.
    this.memo = new OwnWrites({
      keepMs: Number.POSITIVE_INFINITY,
      cacheOf: (written) => ({
        cached: algorithms.lookup(objectKey(written)) as AlgorithmResource | 'absent' | undefined,
        seen: algorithms.lastResourceVersion?.(),
      }),
    });
    this.now = options.now ?? (() => new Date());
  }

  async reconcile(key: string, context: ReconcileContext): Promise<ReconcileResult | void> {
    const cached = this.informers.algorithms.get(key);
    if (!cached || !isAlgorithm(cached)) {
      this.memo.forget(key);
      this.workloads.forget(key);
      return;
    }
    const algorithm = this.memo.freshest(key, cached);
    if (algorithm.metadata.deletionTimestamp) return;
    // Its namespace is going, and the Algorithm with it: every create there would be refused.
    if (namespaceTerminating(this.informers.namespaces, algorithm.metadata.namespace)) return;
    try {
      return await this.converge(key, algorithm, context.signal);
    } catch (err) {
      // Deleted while this reconcile ran (its namespace torn down under it): nothing left to converge or report.
      if (err instanceof NotFoundError && (await isDeleted(this.client, algorithm))) {
        this.memo.forget(key);
        return undefined;
      }
      await this.recordRetry(algorithm, context.retries + 1);
      throw err;
    }
  }

  /** The recipe: observe → decide the rollout → build → apply → announce (Events) → finalize status → when to look again. */
  private async converge(key: string, algorithm: AlgorithmResource, signal: AbortSignal): Promise<ReconcileResult | void> {
    const now = this.now();
    const observed = this.observe(algorithm);
    const rollout = await this.analysis.decide(algorithm, observed.status, observed, now, signal);
    const desired = await this.build(algorithm, observed, rollout);
    const applied = await this.apply(algorithm, observed, desired);
    if (applied === 'namespace-terminating') return undefined;
    for (const event of rolloutEvents(algorithm, rollout, observed.status, this.analysis.policy, desired.split)) {
      await this.announce(key, algorithm, event);
    }
    const status = await this.finalizeStatus(key, algorithm, { observed, rollout, desired, applied, now });
    const fields = { controller: 'algorithm', key, phase: status.phase, wrote: applied.wrote, statusWritten: status.written };
    this.logger.debug({ ...fields, statusWaitMs: status.waitMs }, 'algorithm reconciled');
    return soonest(this.nextVisit(rollout, applied, now), status.waitMs);
  }

  /** A warning (a rollback, a failing or unanalysable canary) is an Event a user acts on; a routine step is a log line. */
  private async announce(key: string, algorithm: AlgorithmResource, event: AlgorithmEvent): Promise<void> {
    if (event.type === 'Warning') await this.events.record(algorithm, event.type, event.reason, event.message);
    else this.logger.info({ controller: 'algorithm', key, reason: event.reason }, event.message);
  }

  /** The previous status and the two tracks' Deployments, as far as the Algorithm controls them. */
  private observe(algorithm: AlgorithmResource): Observed {
    const { name, namespace, uid } = algorithm.metadata;
    const names = algorithmObjectNames(name);
    const controlled = (key: string) => {
      const obj = this.informers.deployments.get(key);
      return obj && isControlledBy(obj, uid) ? obj : undefined;
    };
    const stableLive = controlled(`${namespace}/${names.stable}`);
    const canaryLive = controlled(`${namespace}/${names.canary}`);
    return {
      status: algorithm.status ?? {},
      stableLive,
      stable: stableLive ? summarizeWorkload(stableLive) : undefined,
      canary: canaryLive ? summarizeWorkload(canaryLive) : undefined,
    };
  }

  /**
   * Whether the namespace is known and no preview's (it carries no environment label): only there
   * does an Algorithm get a disruption budget (see AlgorithmWorkloadOptions.disruptionBudget).
   */
  private outsidePreviews(namespace: string): boolean {
    const cached = this.informers.namespaces?.get(namespace);
    return cached !== undefined && cached.metadata.labels?.[ownershipLabelKeys.environment] === undefined;
  }

  /** The workloads the constructs render for this rollout, and the traffic route when the Gateway API splits it. */
  private async build(algorithm: AlgorithmResource, observed: Observed, rollout: Rollout): Promise<Desired> {
    const {
      spec,
      metadata: { name, namespace = '' },
    } = algorithm;
    const latencyMetric = this.options.latencyMetric ?? defaultLatencyMetric;
    const autoscaling = await decideAutoscaling(spec, algorithm.metadata.generation, this.probe, latencyMetric);
    const weight = spec.lifecycle?.canaryWeight ?? 0;
    const scaling = spec.scaling;
    const initialReplicas = scaling ? clamp(spec.replicas ?? 1, scaling.minReplicas ?? 1, scaling.maxReplicas) : (spec.replicas ?? 1);
    const liveReplicas = (observed.stableLive?.spec as { replicas?: number } | undefined)?.replicas;
    const totalReplicas = scaling ? (liveReplicas ?? initialReplicas) : initialReplicas;
    const { plan } = rollout;
    const canary = plan.mode === 'canary' ? { image: plan.state.canaryImage!, replicas: canaryReplicas(totalReplicas, weight) } : undefined;
    const ownerReferences = [controllerReference(algorithm)];
    const objects = this.workloads.render(objectKey(algorithm), algorithm, {
      ...this.options.workload,
      stableReplicas: scaling ? null : initialReplicas,
      stableImage: plan.state.stableImage,
      canary,
      latencyMetric: autoscaling.latencyMetric,
      ownerReferences,
      disruptionBudget: this.outsidePreviews(namespace),
    });
    const routed = !!this.options.gatewayApi && (await this.client.discovery.has(httpRouteKind));
    if (routed) {
      const parentRefs = typeof this.options.gatewayApi === 'object' ? this.options.gatewayApi.parentRefs : undefined;
      objects.push(...renderTrafficRoute({ name, namespace, canaryWeight: canary ? weight : 0, parentRefs, ownerReferences }));
    }
    const split = canary ? { routed, asked: weight, canaryReplicas: canary.replicas, stableReplicas: totalReplicas } : undefined;
    return { objects, routed, weight, split, autoscaling, initialReplicas };
  }

  /**
   * Apply and prune. A refusal a user can fix (an image reference the API rejects, a
   * quota) becomes a condition and an Event, not a crash loop; a namespace being deleted takes
   * the Algorithm with it, and there is nothing left to converge.
   */
  private async apply(algorithm: AlgorithmResource, observed: Observed, desired: Desired): Promise<Applied | 'namespace-terminating'> {
    const { name, namespace = '', uid } = algorithm.metadata;
    const handover = algorithm.spec.scaling
      ? { deployment: algorithmObjectNames(name).stable, live: observed.stableLive, initialReplicas: desired.initialReplicas }
      : undefined;
    try {
      const { deployments, services, autoscalers, budgets, configMaps } = this.informers;
      // A child to create: the API server says whether the namespace is going (the cache may lag).
      const caches = [deployments, services, autoscalers, budgets, configMaps];
      if (createsAny(caches, desired.objects)) await ensureNamespaceActive(this.client, namespace);
      const written = await this.writer.write({ namespace, owner: uid, objects: desired.objects, handover });
      const stable = written.objects.find((o) => o.kind === 'Deployment' && o.metadata.name === algorithmObjectNames(name).stable);
      return { wrote: written.wrote, stable };
    } catch (err) {
      if (err instanceof NamespaceTerminatingError || (err instanceof ForbiddenError && err.namespaceTerminating))
        return 'namespace-terminating';
      if (!(err instanceof InvalidError || err instanceof ForbiddenError)) throw err;
      await this.events.record(algorithm, 'Warning', 'ApplyFailed', err.message);
      return { wrote: false, failure: err.message };
    }
  }

  /**
   * The status, written only where it differs — pure progress only once its wait is over (then
   * `waitMs` says when to look again); our own write is remembered until the cache has it.
   */
  private async finalizeStatus(key: string, algorithm: AlgorithmResource, step: Outcome): Promise<FinalStatus> {
    const { observed, rollout, desired, applied, now } = step;
    const computed = algorithmStatus(
      {
        algorithm,
        previous: observed.status,
        rollout,
        stable: observed.stable,
        canary: observed.canary,
        routed: desired.routed,
        weight: desired.weight,
        split: desired.split,
        autoscaling: desired.autoscaling.condition,
        applyFailure: applied.failure,
        now,
      },
      this.analysis.policy,
    );
    if (!statusChanged(observed.status, computed)) return { phase: computed.phase, written: false };
    const waitMs = statusWait({
      previous: observed.status,
      next: computed,
      applied: applied.wrote,
      deploymentWritten: lastWrittenBy(applied.stable ?? observed.stableLive, this.client.fieldManager),
      now: now.getTime(),
      intervalMs: this.options.progressIntervalMs ?? defaultProgressIntervalMs,
    });
    if (waitMs > 0) return { phase: observed.status.phase, written: false, waitMs };
    const written = await updateStatus(this.client, algorithm, stampReconciled(observed.status, computed, now));
    if (written.written) this.memo.remember(key, written.object);
    return { phase: computed.phase, written: written.written };
  }

  /** When to look again. A canary is analysed on its interval; a refused apply is retried in a minute. */
  private nextVisit(rollout: Rollout, applied: Applied, now: Date): ReconcileResult | undefined {
    if (applied.failure) return { requeueAfter: 60_000 };
    if (rollout.plan.mode !== 'canary') return undefined;
    // Overdue means the canary is not ready yet: its Deployment's events wake us when it is.
    const untilDue = this.analysis.due(rollout.plan.state) - now.getTime();
    return { requeueAfter: untilDue > 0 ? untilDue : this.analysis.intervalMs };
  }

  /** Best effort: the retry count goes to status even though the reconcile failed. */
  private async recordRetry(algorithm: AlgorithmResource, retries: number): Promise<void> {
    if (algorithm.status?.retryCount === retries) return;
    try {
      const written = await this.client.patch(refOf(algorithm), 'merge', { status: { retryCount: retries } }, { subresource: 'status' });
      if (isAlgorithm(written)) this.memo.remember(objectKey(algorithm), written);
    } catch (err) {
      const fields = { controller: 'algorithm', name: algorithm.metadata.name, err: toKubeError(err).message };
      this.logger.warn(fields, 'could not record the retry count');
    }
  }
}

/** What the apply step did. */
interface Applied {
  wrote: boolean;
  /** The stable Deployment as the apply left it (fresher than the cache, which may not have our write yet). */
  stable?: KubeObject;
  /** Why the API server refused the workloads, when a user can fix it. */
  failure?: string;
}

/** What the status step did. */
interface FinalStatus {
  /** The phase the status shows. */
  phase?: string;
  written: boolean;
  /** How long the computed progress waits before it is written. */
  waitMs?: number;
}

/** Everything one reconcile found and decided, for its status. */
interface Outcome {
  observed: Observed;
  rollout: Rollout;
  desired: Desired;
  applied: Applied;
  now: Date;
}

/** The visit asked for, or sooner when the status waits for less. */
function soonest(visit: ReconcileResult | undefined, waitMs: number | undefined): ReconcileResult | undefined {
  if (!waitMs) return visit;
  return { requeueAfter: visit?.requeueAfter === undefined ? waitMs : Math.min(visit.requeueAfter, waitMs) };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
