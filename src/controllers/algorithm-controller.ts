// The Algorithm controller: renders an Algorithm's workloads with the constructs, applies them
// (writing nothing when nothing changed), runs canaries and their analysis against a
// Prometheus-compatible API, and reports it all in status. Every decision is taken from the
// Algorithm and its status, so a restarted operator picks a canary up where it was.
import {
  algorithmApiVersion, algorithmLabel, algorithmObjectNames, defaultLatencyMetric, envChecksumAnnotation,
  renderAlgorithmWorkloads, type AlgorithmResource, type AlgorithmStatus, type AlgorithmWorkloadOptions,
} from '../../constructs/index.js';
import {
  Applier, EventRecorder, ForbiddenError, InvalidError, KubeClient, NotFoundError, controllerReference, createMergePatch, isDeleted, objectKey,
  parseKey, refOf, setCondition, silentLogger, toKubeError, updateStatus,
  type Condition, type ConditionInput, type EventFilter, type Informer, type KubeObject, type Logger,
  type Manager, type ObjectRef, type ReconcileContext, type ReconcileResult, type Reconciler,
} from '../kube/index.js';
import { CustomMetricsProbe, decideAutoscaling } from './algorithm-autoscaling.js';
import { AlgorithmStatusMemo } from './algorithm-status-memo.js';
import {
  defaultSuccessRateQuery, promDuration, recordObservation, renderQuery, verdictOf, type AnalysisPolicy, type Observation,
} from './canary-analysis.js';
import { httpRouteKind, renderTrafficRoute, type RouteParentRef } from './canary-traffic-route.js';
import { PrometheusUnavailableError, queryPrometheus } from './prometheus-query.js';
import { canaryReplicas, concludeRollout, planRollout, replicaWeight, type RolloutOutcome, type RolloutPlan, type RolloutState } from './rollout-plan.js';
import { isControlledBy, summarizeWorkload, type WorkloadSummary } from './rollout-workload-status.js';

export const algorithmKind = { apiVersion: algorithmApiVersion, kind: 'Algorithm' } as const;

/** The status the controller writes: the CRD's, with the rollout bookkeeping it adds. */

/** Canary analysis settings. */
export interface AlgorithmAnalysisOptions {
  /** Time between two analyses of a canary; the first runs one interval after the canary starts. @default 60_000 */
  intervalMs?: number;
  /** Consecutive checks at or above `lifecycle.successThreshold` that promote. @default 3 */
  successChecks?: number;
  /** Consecutive checks below it that roll back (with `rollbackOnDrift`), and consecutive empty checks that make the rollout Inconclusive. @default 5 */
  failureThreshold?: number;
  /** Base URL of the Prometheus-compatible HTTP API (`<url>/api/v1/query`). @default - none: analysis reports Error and never promotes */
  prometheusUrl?: string;
  /** PromQL giving a track's success rate (0..1), with `{{namespace}}`, `{{name}}`, `{{track}}`, `{{window}}`. @default defaultSuccessRateQuery */
  query?: string;
  /** The `{{window}}` range. @default the interval, at least 1m */
  window?: string;
  /** A query not answered within this is an error. @default 10_000 */
  queryTimeoutMs?: number;
}

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
  workload?: Pick<AlgorithmWorkloadOptions, 'containerPort' | 'resources' | 'runAsUser' | 'readOnlyRootFilesystem' | 'readinessPath' | 'cpuTargetUtilization'>;
  /** @default () => new Date() */
  now?: () => Date;
}

/** The field manager that seeds the stable Deployment's replicas once, so the HPA owns them afterwards. */
export const initialReplicasFieldManager = 'preview-operator-initial-replicas';

/** Algorithm events that warrant a reconcile: spec changes, the env checksum (rolls pods), deletion. */
const algorithmChanged: EventFilter<KubeObject> = (e) =>
  e.type !== 'update'
  || e.old?.metadata.generation !== e.object.metadata.generation
  || e.old?.metadata.annotations?.[envChecksumAnnotation] !== e.object.metadata.annotations?.[envChecksumAnnotation]
  || (!e.old?.metadata.deletionTimestamp && !!e.object.metadata.deletionTimestamp);

/**
 * Registers the Algorithm controller with `manager` (call before `manager.start()`). It
 * watches Algorithms and the Deployments, Services, HPAs, PDBs and ConfigMaps labelled
 * `ai.alien6.io/algorithm`, mapping each back to its controlling Algorithm.
 */
export function registerAlgorithmController(manager: Manager, options: AlgorithmControllerOptions = {}): void {
  const informerOptions = { namespace: options.namespace };
  const owned = { ...informerOptions, labelSelector: algorithmLabel };
  const algorithms = manager.informer<KubeObject>(algorithmKind, informerOptions);
  const deployments = manager.informer({ apiVersion: 'apps/v1', kind: 'Deployment' }, owned);
  const services = manager.informer({ apiVersion: 'v1', kind: 'Service' }, owned);
  const autoscalers = manager.informer({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }, owned);
  const budgets = manager.informer({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, owned);
  const configMaps = manager.informer({ apiVersion: 'v1', kind: 'ConfigMap' }, owned);
  const reconciler = new AlgorithmReconciler(manager.client, { algorithms, deployments, services, autoscalers, budgets, configMaps }, options);
  manager.addController({
    name: 'algorithm',
    for: algorithms,
    filter: algorithmChanged,
    owns: [deployments, services, autoscalers, budgets, configMaps],
    reconciler,
    workers: options.workers ?? 4,
    resyncPeriodMs: options.resyncPeriodMs,
  });
}

export interface AlgorithmInformers {
  algorithms: Informer<KubeObject>;
  deployments: Informer<KubeObject>;
  services: Informer<KubeObject>;
  autoscalers: Informer<KubeObject>;
  budgets: Informer<KubeObject>;
  configMaps: Informer<KubeObject>;
}

interface AnalysisReport {
  /** The error of this reconcile's analysis, when it could not be run. */
  error?: string;
  /** An analysis ran now. */
  ran: boolean;
  /** Why the canary counts as failed without a measurement (it never became available). */
  canaryFailure?: string;
}

export class AlgorithmReconciler implements Reconciler {
  private readonly logger: Logger;
  private readonly events: EventRecorder;
  private readonly applier: Applier;
  private readonly replicaSeeder: KubeClient;
  private readonly probe: CustomMetricsProbe;
  private readonly memo = new AlgorithmStatusMemo();
  private readonly policy: AnalysisPolicy;
  private readonly intervalMs: number;
  private readonly window: string;
  private readonly now: () => Date;
  private readonly ownedInformers: Informer<KubeObject>[];
  /** Live objects of kinds no informer watches (the HTTPRoute), read for the apply in progress. */
  private readonly fetched = new Map<string, KubeObject | 'absent'>();

  constructor(private readonly client: KubeClient, private readonly informers: AlgorithmInformers, private readonly options: AlgorithmControllerOptions = {}) {
    this.logger = options.logger ?? silentLogger;
    this.events = options.events ?? new EventRecorder(client, { component: 'preview-operator', logger: this.logger });
    this.ownedInformers = [informers.deployments, informers.services, informers.autoscalers, informers.budgets, informers.configMaps];
    this.applier = new Applier(client, { lookup: (ref) => this.cached(ref) });
    this.replicaSeeder = new KubeClient(client.kubeConfig, { fieldManager: initialReplicasFieldManager });
    this.probe = new CustomMetricsProbe(client, options.customMetricsCacheMs ?? 60_000);
    const a = options.analysis ?? {};
    this.intervalMs = a.intervalMs ?? 60_000;
    this.policy = { successChecks: a.successChecks ?? 3, failureThreshold: a.failureThreshold ?? 5 };
    this.window = a.window ?? promDuration(Math.max(this.intervalMs, 60_000));
    this.now = options.now ?? (() => new Date());
    // Fail at start, not at the first canary, on a template with an unknown placeholder.
    renderQuery(a.query ?? defaultSuccessRateQuery, { namespace: 'n', name: 'a', track: 'canary', window: '1m' });
  }

  async reconcile(key: string, context: ReconcileContext): Promise<ReconcileResult | void> {
    const cached = this.informers.algorithms.get(key) as AlgorithmResource | undefined;
    if (!cached) {
      this.memo.forget(key);
      return;
    }
    const algorithm = this.memo.freshest(key, cached);
    if (algorithm.metadata.deletionTimestamp) return;
    try {
      return await this.sync(algorithm, key, context);
    } catch (err) {
      // Deleted while this reconcile ran (its namespace torn down under it): nothing left to converge or report.
      if (err instanceof NotFoundError && (await isDeleted(this.client, algorithm as unknown as KubeObject))) {
        this.memo.forget(key);
        return undefined;
      }
      await this.recordRetry(algorithm, context.retries + 1);
      throw err;
    }
  }

  private async sync(algorithm: AlgorithmResource, key: string, context: ReconcileContext): Promise<ReconcileResult | void> {
    const now = this.now();
    const nowIso = now.toISOString();
    const { namespace, name } = parseKey(key) as { namespace: string; name: string };
    const uid = algorithm.metadata.uid;
    const spec = algorithm.spec;
    const status = (algorithm.status ?? {}) as AlgorithmStatus;
    const names = algorithmObjectNames(name);
    const owned = (obj: KubeObject | undefined) => (obj && isControlledBy(obj, uid) ? obj : undefined);
    const stableLive = owned(this.informers.deployments.get(`${namespace}/${names.stable}`));
    const canaryLive = owned(this.informers.deployments.get(`${namespace}/${names.canary}`));
    const stable = stableLive ? summarizeWorkload(stableLive) : undefined;
    const canaryObserved = canaryLive ? summarizeWorkload(canaryLive) : undefined;

    const autoscaling = await decideAutoscaling(spec, algorithm.metadata.generation, this.probe, this.options.latencyMetric ?? defaultLatencyMetric);

    // 1. The rollout: which image is stable, whether a canary runs, what the analysis says.
    let plan = planRollout(spec, statusRollout(status), { image: stable?.image }, nowIso);
    const report: AnalysisReport = { ran: false };
    if (plan.mode === 'canary' && !plan.started) {
      const canaryReady = canaryObserved !== undefined && canaryObserved.image === plan.state.canaryImage && canaryObserved.ready > 0;
      if (canaryObserved?.failure && canaryObserved.image === plan.state.canaryImage) {
        report.canaryFailure = `canary ${plan.state.canaryImage} did not become available: ${canaryObserved.failure}`;
      } else if (canaryReady && now.getTime() >= this.analysisDue(plan.state)) {
        const observation = await this.observe(namespace, name, context.signal);
        const step = recordObservation(plan.state.lastAnalysis, observation, spec.lifecycle?.successThreshold ?? 0.99, this.policy, nowIso);
        plan = { ...plan, state: { ...plan.state, lastAnalysis: step.analysis } };
        report.ran = true;
        if (observation.kind === 'error') report.error = observation.message;
      }
    }
    const verdict = report.canaryFailure ? 'fail' : verdictOf(plan.state.lastAnalysis, this.policy);
    const concluded = concludeRollout(plan, verdict, spec.lifecycle?.rollbackOnDrift ?? true);
    plan = concluded.plan;

    // 2. Desired objects.
    const weight = spec.lifecycle?.canaryWeight ?? 0;
    const scaling = spec.scaling;
    const initialReplicas = scaling ? clamp(spec.replicas ?? 1, scaling.minReplicas ?? 1, scaling.maxReplicas) : (spec.replicas ?? 1);
    const totalReplicas = scaling ? ((stableLive?.spec as { replicas?: number } | undefined)?.replicas ?? initialReplicas) : initialReplicas;
    const canary = plan.mode === 'canary' ? { image: plan.state.canaryImage!, replicas: canaryReplicas(totalReplicas, weight) } : undefined;
    const ownerReferences = [controllerReference(algorithm as unknown as KubeObject)];
    const desired = renderAlgorithmWorkloads(algorithm as Parameters<typeof renderAlgorithmWorkloads>[0], {
      ...this.options.workload,
      stableReplicas: scaling ? null : initialReplicas,
      stableImage: plan.state.stableImage,
      canary,
      latencyMetric: autoscaling.latencyMetric,
      ownerReferences,
    }) as unknown as KubeObject[];
    const routed = await this.routeServed();
    if (routed) {
      const parentRefs = typeof this.options.gatewayApi === 'object' ? this.options.gatewayApi.parentRefs : undefined;
      desired.push(...renderTrafficRoute({ name, namespace, canaryWeight: canary ? weight : 0, parentRefs, ownerReferences }));
    }

    // 3. Apply, seed the stable replicas for the HPA, prune what is no longer rendered.
    let wrote = false;
    let applyFailure: string | undefined;
    const uncached = routed ? desired.filter((o) => o.kind === httpRouteKind.kind) : [];
    try {
      for (const obj of uncached) await this.fetch(refOf(obj));
      if (scaling && stableLive && !replicasHeldByOthers(stableLive, this.client.fieldManager)) {
        // About to stop applying spec.replicas: hand the current value to a manager of its own
        // first, or server-side apply would reset it to the default when we let go of it.
        await this.seedReplicas(namespace, names.stable, (stableLive.spec as { replicas?: number }).replicas ?? initialReplicas);
        wrote = true;
      }
      const results = await this.applier.apply(desired);
      wrote ||= results.some((r) => r.action !== 'unchanged');
      const createdStable = results.find((r) => r.ref.kind === 'Deployment' && r.ref.name === names.stable && r.action === 'created');
      // "Created" says only that the cache had no Deployment: one it had not seen yet may already
      // have replicas held by the autoscaler (or a seed), which must not be reset.
      if (scaling && createdStable && !replicasHeldByOthers(createdStable.object, this.client.fieldManager)) await this.seedReplicas(namespace, names.stable, initialReplicas);
      wrote = (await this.prune(uid, namespace, desired)) || wrote;
    } catch (err) {
      // The namespace is being deleted, and this object with it: nothing left to converge or report.
      if (err instanceof ForbiddenError && err.namespaceTerminating) return undefined;
      if (!(err instanceof InvalidError || err instanceof ForbiddenError)) throw err;
      // A user can fix these (an image reference the API rejects, a quota): say so, do not crash-loop.
      applyFailure = err.message;
      await this.events.record(algorithm as unknown as KubeObject, 'Warning', 'ApplyFailed', err.message);
    } finally {
      for (const obj of uncached) this.fetched.delete(fetchKey(refOf(obj)));
    }

    // 4. Events for what happened to the rollout.
    await this.recordRolloutEvents(algorithm, plan, concluded.outcome, report, status);

    // 5. Status.
    const next = this.computeStatus({
      algorithm, status, plan, outcome: concluded.outcome, report, stable, canaryObserved, routed, weight,
      autoscaling: autoscaling.condition, applyFailure, now,
    });
    const changed = createMergePatch(withoutTimestamp(status), withoutTimestamp(next)) !== undefined;
    next.lastReconciled = changed || wrote || !status.lastReconciled ? formatIso(now) : status.lastReconciled;
    const written = await updateStatus(this.client, algorithm as unknown as KubeObject, next as Record<string, unknown>);
    if (written.written) this.memo.remember(key, written.object as unknown as AlgorithmResource);
    this.logger.debug({ controller: 'algorithm', key, phase: next.phase, wrote, statusWritten: written.written }, 'algorithm reconciled');

    if (applyFailure) return { requeueAfter: 60_000 };
    if (plan.mode === 'canary') {
      // Overdue means the canary is not ready yet: its Deployment's events wake us when it is.
      const untilDue = this.analysisDue(plan.state) - now.getTime();
      return { requeueAfter: untilDue > 0 ? untilDue : this.intervalMs };
    }
    return undefined;
  }

  /** When the next analysis of the current canary is due (ms since the epoch). */
  private analysisDue(state: RolloutState): number {
    const last = Math.max(Date.parse(state.lastAnalysis?.time ?? '') || 0, Date.parse(state.canaryStartTime ?? '') || 0);
    return last + this.intervalMs;
  }

  /** The canary's success rate, or why it could not be had. */
  private async observe(namespace: string, name: string, signal: AbortSignal): Promise<Observation> {
    const a = this.options.analysis ?? {};
    if (!a.prometheusUrl) return { kind: 'error', message: 'no Prometheus URL is configured for canary analysis' };
    const query = renderQuery(a.query ?? defaultSuccessRateQuery, { namespace, name, track: 'canary', window: this.window });
    try {
      const result = await queryPrometheus(a.prometheusUrl, query, { timeoutMs: a.queryTimeoutMs ?? 10_000, signal });
      return result.kind === 'value' ? { kind: 'value', value: result.value } : { kind: 'empty' };
    } catch (err) {
      if (err instanceof PrometheusUnavailableError) return { kind: 'error', message: err.message };
      throw err;
    }
  }

  private async routeServed(): Promise<boolean> {
    if (!this.options.gatewayApi) return false;
    return this.client.discovery.has(httpRouteKind);
  }

  private async seedReplicas(namespace: string, name: string, replicas: number): Promise<void> {
    await this.replicaSeeder.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { replicas } });
  }

  /** Deletes cached objects this Algorithm controls that were not rendered (the canary after a rollout, a dropped HPA). */
  private async prune(uid: string | undefined, namespace: string, desired: readonly KubeObject[]): Promise<boolean> {
    const keep = new Set(desired.map((o) => `${o.kind}/${o.metadata.name}`));
    let deleted = false;
    for (const informer of this.ownedInformers) {
      for (const obj of informer.list(namespace)) {
        if (!isControlledBy(obj, uid) || obj.metadata.deletionTimestamp) continue;
        if (keep.has(`${informer.kind.kind}/${obj.metadata.name}`)) continue;
        try {
          await this.client.delete({ ...informer.kind, namespace, name: obj.metadata.name! }, { preconditions: { uid: obj.metadata.uid } });
          deleted = true;
        } catch (err) {
          if (!(err instanceof NotFoundError) && !(toKubeError(err).statusCode === 409)) throw err;
        }
      }
    }
    return deleted;
  }

  private async recordRolloutEvents(algorithm: AlgorithmResource, plan: RolloutPlan, outcome: RolloutOutcome, report: AnalysisReport, previous: AlgorithmStatus): Promise<void> {
    const involved = algorithm as unknown as KubeObject;
    const threshold = algorithm.spec.lifecycle?.successThreshold ?? 0.99;
    const last = plan.state.lastAnalysis;
    if (plan.started) {
      await this.events.record(involved, 'Normal', 'CanaryStarted', `canary ${plan.state.canaryImage} started beside ${plan.state.stableImage} with ${algorithm.spec.lifecycle?.canaryWeight ?? 0}% of traffic`);
    }
    if (report.error) await this.events.record(involved, 'Warning', 'AnalysisUnavailable', `${report.error}; the canary is not promoted while it cannot be analysed`);
    switch (outcome) {
      case 'promoted':
        await this.events.record(involved, 'Normal', 'Promoted', `canary ${plan.state.stableImage} promoted after ${last?.consecutiveSuccesses ?? 0} consecutive checks at or above ${threshold}`);
        break;
      case 'rolledBack':
        await this.events.record(involved, 'Warning', 'RolledBack', rollbackMessage(plan, report, threshold, this.policy));
        break;
      case 'failing':
        if (report.ran || report.canaryFailure) await this.events.record(involved, 'Warning', 'CanaryBelowThreshold', failingMessage(plan, report, threshold, this.policy));
        break;
      case 'inconclusive':
        if (previous.phase !== 'Inconclusive') {
          await this.events.record(involved, 'Warning', 'AnalysisInconclusive', `no samples for canary ${plan.state.canaryImage} in ${last?.consecutiveNoData ?? 0} consecutive checks: not promoted`);
        }
        break;
      default:
        break;
    }
  }

  private computeStatus(input: {
    algorithm: AlgorithmResource;
    status: AlgorithmStatus;
    plan: RolloutPlan;
    outcome: RolloutOutcome;
    report: AnalysisReport;
    stable: WorkloadSummary | undefined;
    canaryObserved: WorkloadSummary | undefined;
    routed: boolean;
    weight: number;
    autoscaling: ConditionInput | undefined;
    applyFailure: string | undefined;
    now: Date;
  }): AlgorithmStatus {
    const { algorithm, status, plan, outcome, report, stable, canaryObserved, now } = input;
    const generation = algorithm.metadata.generation;
    const threshold = algorithm.spec.lifecycle?.successThreshold ?? 0.99;
    const canaryRuns = plan.mode === 'canary';
    const readyStable = stable?.ready ?? 0;
    const readyCanary = canaryRuns && canaryObserved && canaryObserved.image === plan.state.canaryImage ? canaryObserved.ready : 0;
    const stableDone = !!stable && stable.rolledOut && stable.image === plan.state.stableImage;

    let phase: AlgorithmStatus['phase'];
    if (input.applyFailure) phase = 'Failed';
    else if (!stable) phase = 'Pending';
    else if (stable.failure) phase = 'Degraded';
    else if (outcome === 'failing') phase = 'Degraded';
    else if (outcome === 'inconclusive') phase = 'Inconclusive';
    else if (canaryRuns) phase = 'Canary';
    else if (!stableDone) phase = 'Progressing';
    else if (plan.mode === 'rolledBack') phase = 'RolledBack';
    else phase = 'Running';

    const c = (input0: Omit<ConditionInput, 'observedGeneration'>): ConditionInput => ({ ...input0, observedGeneration: generation });
    let conditions: Condition[] = (status.conditions ?? []) as Condition[];
    const set = (condition: ConditionInput) => (conditions = setCondition(conditions, condition, now));

    // Ready: the stable track serves, rolled out.
    if (stableDone) set(c({ type: 'Ready', status: 'True', reason: 'Available', message: `${readyStable} of ${stable!.desired} stable replicas ready, running ${plan.state.stableImage}` }));
    else if (!stable) set(c({ type: 'Ready', status: 'False', reason: 'Pending', message: 'the stable Deployment does not exist yet' }));
    else set(c({ type: 'Ready', status: 'False', reason: stable.failure ? 'ProgressDeadlineExceeded' : 'RollingOut', message: stable.failure ?? `${readyStable} of ${stable.desired} stable replicas ready` }));

    // Progressing: a rollout (rolling update or canary) is under way.
    const analysisText = describeAnalysis(plan.state.lastAnalysis, threshold);
    if (report.error) set(c({ type: 'Progressing', status: 'True', reason: 'AnalysisUnavailable', message: `${report.error}; canary ${plan.state.canaryImage} is not promoted while it cannot be analysed` }));
    else if (outcome === 'inconclusive') set(c({ type: 'Progressing', status: 'False', reason: 'AnalysisInconclusive', message: `no samples for canary ${plan.state.canaryImage} in ${plan.state.lastAnalysis?.consecutiveNoData ?? 0} consecutive checks: paused, not promoted` }));
    else if (canaryRuns) set(c({ type: 'Progressing', status: 'True', reason: 'CanaryAnalysis', message: `canary ${plan.state.canaryImage} at ${input.weight}% ${input.routed ? 'by HTTPRoute' : 'by replica ratio'}; ${analysisText}` }));
    else if (plan.mode === 'rolledBack') set(c({ type: 'Progressing', status: 'False', reason: 'RolledBack', message: `${plan.state.rolledBackImage} was rolled back; ${plan.state.stableImage} keeps serving` }));
    else if (!stableDone) set(c({ type: 'Progressing', status: 'True', reason: 'RollingUpdate', message: `rolling out ${plan.state.stableImage}` }));
    else set(c({ type: 'Progressing', status: 'False', reason: outcome === 'promoted' ? 'Promoted' : 'RolloutComplete', message: `${plan.state.stableImage} is rolled out` }));

    // Degraded: something needs attention.
    if (input.applyFailure) set(c({ type: 'Degraded', status: 'True', reason: 'ApplyFailed', message: input.applyFailure }));
    else if (plan.mode === 'rolledBack') set(c({ type: 'Degraded', status: 'True', reason: 'CanaryRolledBack', message: outcome === 'rolledBack' ? rollbackMessage(plan, report, threshold, this.policy) : (findMessage(status.conditions, 'Degraded', 'CanaryRolledBack') ?? `${plan.state.rolledBackImage} was rolled back`) }));
    else if (outcome === 'failing') set(c({ type: 'Degraded', status: 'True', reason: 'CanaryBelowThreshold', message: failingMessage(plan, report, threshold, this.policy) }));
    else if (stable?.failure) set(c({ type: 'Degraded', status: 'True', reason: 'ProgressDeadlineExceeded', message: stable.failure }));
    else set(c({ type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no problem detected' }));

    if (input.autoscaling) set(input.autoscaling);
    else conditions = conditions.filter((x) => x.type !== 'AutoscalingDegraded');

    const next: AlgorithmStatus = {
      phase,
      observedGeneration: generation,
      retryCount: 0,
      readyReplicas: readyStable + readyCanary,
      stableImage: plan.state.stableImage,
      desiredWeight: canaryRuns ? input.weight : 0,
      actualWeight: canaryRuns ? (input.routed ? (readyCanary > 0 ? input.weight : 0) : replicaWeight(readyCanary, readyStable)) : 0,
      conditions: conditions as AlgorithmStatus['conditions'],
    };
    if (status.lastReconciled) next.lastReconciled = status.lastReconciled;
    if (plan.state.canaryImage) next.canaryImage = plan.state.canaryImage;
    if (plan.state.canaryStartTime) next.canaryStartTime = plan.state.canaryStartTime;
    if (plan.state.rolledBackImage) next.rolledBackImage = plan.state.rolledBackImage;
    if (plan.state.lastAnalysis) next.lastAnalysis = plan.state.lastAnalysis;
    return next;
  }

  /** Best effort: the retry count goes to status even though the reconcile failed. */
  private async recordRetry(algorithm: AlgorithmResource, retries: number): Promise<void> {
    if (algorithm.status?.retryCount === retries) return;
    try {
      const written = await this.client.patch(refOf(algorithm as unknown as KubeObject), 'merge', { status: { retryCount: retries } }, { subresource: 'status' });
      this.memo.remember(objectKey(algorithm as unknown as KubeObject), written as unknown as AlgorithmResource);
    } catch (err) {
      this.logger.warn({ controller: 'algorithm', name: algorithm.metadata.name, err: toKubeError(err).message }, 'could not record the retry count');
    }
  }

  private cached(ref: ObjectRef): KubeObject | 'absent' | undefined {
    const informer = this.ownedInformers.find((i) => i.kind.kind === ref.kind && i.kind.apiVersion === ref.apiVersion);
    if (informer) return informer.lookup(`${ref.namespace}/${ref.name}`);
    return this.fetched.get(fetchKey(ref));
  }

  /** Reads a live object no informer holds, for the Applier's unchanged check. */
  private async fetch(ref: ObjectRef): Promise<void> {
    try {
      this.fetched.set(fetchKey(ref), await this.client.get(ref));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      this.fetched.set(fetchKey(ref), 'absent');
    }
  }
}

function fetchKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

function statusRollout(status: AlgorithmStatus): Partial<RolloutState> {
  return {
    stableImage: status.stableImage,
    canaryImage: status.canaryImage,
    canaryStartTime: status.canaryStartTime,
    rolledBackImage: status.rolledBackImage,
    lastAnalysis: status.lastAnalysis,
  };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** True if a field manager other than `ours` owns the Deployment's spec.replicas (the seed, or an HPA's scale writes). */
function replicasHeldByOthers(deployment: KubeObject, ours: string): boolean {
  return (deployment.metadata.managedFields ?? []).some((entry) => {
    if (entry.manager === ours && entry.operation === 'Apply') return false;
    const spec = entry.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined;
    return !!spec && 'f:replicas' in spec;
  });
}

function withoutTimestamp(status: AlgorithmStatus): Record<string, unknown> {
  const { lastReconciled: _ignored, ...rest } = status;
  return rest as Record<string, unknown>;
}

function formatIso(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

function describeAnalysis(analysis: RolloutState['lastAnalysis'], threshold: number): string {
  if (!analysis) return 'waiting for the first analysis';
  const value = analysis.value === undefined ? 'no samples' : `success rate ${analysis.value.toFixed(4)}`;
  return `last analysis ${analysis.result}: ${value} (threshold ${threshold}); ${analysis.consecutiveSuccesses ?? 0} successes, ${analysis.consecutiveFailures ?? 0} failures, ${analysis.consecutiveNoData ?? 0} empty in a row`;
}

function rollbackMessage(plan: RolloutPlan, report: AnalysisReport, threshold: number, policy: AnalysisPolicy): string {
  const image = plan.state.rolledBackImage ?? plan.state.canaryImage;
  if (report.canaryFailure) return `${report.canaryFailure}; rolled back to ${plan.state.stableImage}`;
  const value = plan.state.lastAnalysis?.value;
  return `canary ${image} success rate ${value === undefined ? 'unknown' : value.toFixed(4)} below successThreshold ${threshold} `
    + `for ${plan.state.lastAnalysis?.consecutiveFailures ?? policy.failureThreshold} consecutive checks (failureThreshold ${policy.failureThreshold}); rolled back to ${plan.state.stableImage}`;
}

function failingMessage(plan: RolloutPlan, report: AnalysisReport, threshold: number, policy: AnalysisPolicy): string {
  if (report.canaryFailure) return `${report.canaryFailure}; kept because rollbackOnDrift is false`;
  const value = plan.state.lastAnalysis?.value;
  return `canary ${plan.state.canaryImage} success rate ${value === undefined ? 'unknown' : value.toFixed(4)} below successThreshold ${threshold} `
    + `for ${plan.state.lastAnalysis?.consecutiveFailures ?? 0} consecutive checks (failureThreshold ${policy.failureThreshold}); kept because rollbackOnDrift is false`;
}

function findMessage(conditions: AlgorithmStatus['conditions'], type: string, reason: string): string | undefined {
  const found = conditions?.find((x) => x.type === type && x.reason === reason);
  return found?.message;
}
