// What an Algorithm says about itself, pure: its status (phase, the Ready / Progressing /
// Degraded conditions, the rollout's bookkeeping) and the Events a rollout step is worth, from
// what one reconcile decided and observed. The reconciler (algorithm-reconciler.ts) writes them.
import type { AlgorithmResource, AlgorithmStatus } from '../../constructs/index.js';
import {
  createMergePatch,
  formatTime,
  setCondition,
  setKstatusConditions,
  type Condition,
  type ConditionInput,
  type EventType,
  type KstatusSituation,
} from '../kube/index.js';
import type { AnalysisPolicy } from './canary-analysis.js';
import { replicaWeight, type RolloutOutcome, type RolloutPlan, type RolloutState } from './rollout-plan.js';
import type { WorkloadSummary } from './rollout-workload-status.js';

/** What this reconcile's canary analysis came to. */
export interface AnalysisReport {
  /** The error of this reconcile's analysis, when it could not be run. */
  error?: string;
  /** An analysis ran now. */
  ran: boolean;
  /** Why the canary counts as failed without a measurement (it never became available). */
  canaryFailure?: string;
}

/** The rollout as one reconcile decided it. */
export interface Rollout {
  plan: RolloutPlan;
  outcome: RolloutOutcome;
  report: AnalysisReport;
}

/** Everything the status is computed from. */
export interface AlgorithmStatusInput {
  algorithm: AlgorithmResource;
  /** The status before this reconcile. */
  previous: AlgorithmStatus;
  rollout: Rollout;
  stable: WorkloadSummary | undefined;
  canary: WorkloadSummary | undefined;
  /** Canary traffic is split by an HTTPRoute (else by replica ratio). */
  routed: boolean;
  /** `lifecycle.canaryWeight`. */
  weight: number;
  /** How the running canary's traffic is split (none without a canary). */
  split?: TrafficSplit;
  /** The `AutoscalingDegraded` condition, when the Algorithm autoscales. */
  autoscaling: ConditionInput | undefined;
  /** Why the apply was refused, when a user can fix it. */
  applyFailure: string | undefined;
  now: Date;
}

/** One Event on the Algorithm. */
export interface AlgorithmEvent {
  type: EventType;
  reason: string;
  message: string;
}

type Phase = NonNullable<AlgorithmStatus['phase']>;

/** How a canary's traffic is split: by an HTTPRoute's weights, or by the ratio of its replicas to the stable ones. */
export interface TrafficSplit {
  routed: boolean;
  /** `lifecycle.canaryWeight`: what was asked. */
  asked: number;
  canaryReplicas: number;
  stableReplicas: number;
}

/** The canary's share of traffic in effect once its replicas are ready: the route's weight, or its share of the pods. */
export function effectiveWeight(split: TrafficSplit): number {
  return split.routed ? split.asked : replicaWeight(split.canaryReplicas, split.stableReplicas);
}

/** `25% of traffic by replica ratio (1 canary beside 3 stable replicas; canaryWeight 20%)`, or `20% of traffic by HTTPRoute`. */
export function describeSplit(split: TrafficSplit): string {
  if (split.routed) return `${split.asked}% of traffic by HTTPRoute`;
  const plural = (n: number) => (n === 1 ? 'replica' : 'replicas');
  const pods = `${split.canaryReplicas} canary beside ${split.stableReplicas} stable ${plural(split.stableReplicas)}`;
  return `${effectiveWeight(split)}% of traffic by replica ratio (${pods}; canaryWeight ${split.asked}%)`;
}

/** The status the controller writes (without `lastReconciled`, which `stampReconciled` sets). */
export function algorithmStatus(input: AlgorithmStatusInput, policy: AnalysisPolicy): AlgorithmStatus {
  const {
    rollout: { plan },
    stable,
    previous,
  } = input;
  const canaryRuns = plan.mode === 'canary';
  const readyStable = stable?.ready ?? 0;
  const readyCanary = canaryRuns && input.canary && input.canary.image === plan.state.canaryImage ? input.canary.ready : 0;
  const phase = algorithmPhase(input);
  let conditions = algorithmConditions(input, policy, phase);
  if (input.autoscaling) conditions = setCondition(conditions, input.autoscaling, input.now);
  else conditions = conditions.filter((x) => x.type !== 'AutoscalingDegraded');
  const routedWeight = readyCanary > 0 ? input.weight : 0;
  const next: AlgorithmStatus = {
    phase,
    observedGeneration: input.algorithm.metadata.generation,
    retryCount: 0,
    readyReplicas: readyStable + readyCanary,
    stableImage: plan.state.stableImage,
    desiredWeight: canaryRuns ? input.weight : 0,
    actualWeight: canaryRuns ? (input.routed ? routedWeight : replicaWeight(readyCanary, readyStable)) : 0,
    conditions,
  };
  if (previous.lastReconciled) next.lastReconciled = previous.lastReconciled;
  if (plan.state.canaryImage) next.canaryImage = plan.state.canaryImage;
  if (plan.state.canaryStartTime) next.canaryStartTime = plan.state.canaryStartTime;
  if (plan.state.rolledBackImage) next.rolledBackImage = plan.state.rolledBackImage;
  if (plan.state.lastAnalysis) next.lastAnalysis = plan.state.lastAnalysis;
  return next;
}

/** Whether the status says anything new (`lastReconciled` aside). */
export function statusChanged(previous: AlgorithmStatus, next: AlgorithmStatus): boolean {
  return createMergePatch(withoutTimestamp(previous), withoutTimestamp(next)) !== undefined;
}

/**
 * `lastReconciled` moves only with another change of status (else every resync would write, and
 * every re-apply of a drifted object): it says when the status last changed, which the pacing of
 * progress (algorithm-status-pacing.ts) counts from.
 */
export function stampReconciled(previous: AlgorithmStatus, next: AlgorithmStatus, now: Date): AlgorithmStatus {
  const stamp = statusChanged(previous, next) || !previous.lastReconciled;
  return { ...next, lastReconciled: stamp ? formatTime(now) : previous.lastReconciled };
}

function algorithmPhase({ rollout: { plan, outcome }, stable, applyFailure }: AlgorithmStatusInput): Phase {
  if (applyFailure) return 'Failed';
  if (!stable) return 'Pending';
  if (stable.failure || outcome === 'failing') return 'Degraded';
  if (outcome === 'inconclusive') return 'Inconclusive';
  if (plan.mode === 'canary') return 'Canary';
  if (!stableRolledOut(plan, stable)) return 'Progressing';
  if (plan.mode === 'rolledBack') return 'RolledBack';
  return 'Running';
}

function stableRolledOut(plan: RolloutPlan, stable: WorkloadSummary | undefined): boolean {
  return !!stable && stable.rolledOut && stable.image === plan.state.stableImage;
}

/**
 * Ready, Progressing and Degraded, and kstatus's Reconciling and Stalled, set on the previous
 * conditions (unchanged ones keep their transition time).
 */
function algorithmConditions(input: AlgorithmStatusInput, policy: AnalysisPolicy, phase: Phase): Condition[] {
  const generation = input.algorithm.metadata.generation;
  let conditions: Condition[] = input.previous.conditions ?? [];
  const ready = readyCondition(input);
  const progressing = progressingCondition(input);
  const degraded = degradedCondition(input, policy);
  for (const condition of [ready, progressing, degraded]) {
    conditions = setCondition(conditions, { ...condition, observedGeneration: generation }, input.now);
  }
  return setKstatusConditions(conditions, kstatusSituation(phase, { ready, progressing, degraded }), generation, input.now);
}

type Stated = Omit<ConditionInput, 'observedGeneration'>;

/**
 * Running is current; a rollout, a canary under analysis or a missing Deployment is progressing;
 * what waits for a person (a refused apply, a rollout past its deadline, a failing, paused or
 * rolled-back canary: spec.image is not what serves) is stalled.
 */
export function kstatusSituation(phase: Phase, stated: { ready: Stated; progressing: Stated; degraded: Stated }): KstatusSituation {
  switch (phase) {
    case 'Running':
      return { state: 'current' };
    case 'Failed':
    case 'Degraded':
    case 'RolledBack':
      return { state: 'stalled', reason: stated.degraded.reason, message: stated.degraded.message };
    case 'Inconclusive':
      return { state: 'stalled', reason: stated.progressing.reason, message: stated.progressing.message };
    case 'Pending':
      return { state: 'progressing', reason: stated.ready.reason, message: stated.ready.message };
    default:
      return { state: 'progressing', reason: stated.progressing.reason, message: stated.progressing.message };
  }
}

/** Ready: the stable track serves, rolled out. */
function readyCondition({ rollout: { plan }, stable }: AlgorithmStatusInput): Stated {
  const ready = stable?.ready ?? 0;
  if (!stable) return { type: 'Ready', status: 'False', reason: 'Pending', message: 'the stable Deployment does not exist yet' };
  if (stableRolledOut(plan, stable)) {
    const message = `${ready} of ${stable.desired} stable replicas ready, running ${plan.state.stableImage}`;
    return { type: 'Ready', status: 'True', reason: 'Available', message };
  }
  const reason = stable.failure ? 'ProgressDeadlineExceeded' : 'RollingOut';
  return { type: 'Ready', status: 'False', reason, message: stable.failure ?? `${ready} of ${stable.desired} stable replicas ready` };
}

/** Progressing: a rollout (rolling update or canary) is under way. */
function progressingCondition(input: AlgorithmStatusInput): Stated {
  const {
    algorithm,
    rollout: { plan, outcome, report },
    stable,
    routed,
    weight,
    split,
  } = input;
  const { canaryImage, stableImage } = plan.state;
  const progressing = (status: 'True' | 'False', reason: string, message: string): Stated => ({
    type: 'Progressing',
    status,
    reason,
    message,
  });
  if (report.error) {
    return progressing('True', 'AnalysisUnavailable', `${report.error}; canary ${canaryImage} is not promoted while it cannot be analysed`);
  }
  if (outcome === 'inconclusive') {
    const empty = plan.state.lastAnalysis?.consecutiveNoData ?? 0;
    const message = `no samples for canary ${canaryImage} in ${empty} consecutive checks: paused, not promoted`;
    return progressing('False', 'AnalysisInconclusive', message);
  }
  if (plan.mode === 'canary') {
    const analysis = describeAnalysis(plan.state.lastAnalysis, successThreshold(algorithm));
    const share = split ? describeSplit(split) : `${weight}% of traffic ${routed ? 'by HTTPRoute' : 'by replica ratio'}`;
    return progressing('True', 'CanaryAnalysis', `canary ${canaryImage} at ${share}; ${analysis}`);
  }
  if (plan.mode === 'rolledBack') {
    return progressing('False', 'RolledBack', `${plan.state.rolledBackImage} was rolled back; ${stableImage} keeps serving`);
  }
  if (!stableRolledOut(plan, stable)) return progressing('True', 'RollingUpdate', `rolling out ${stableImage}`);
  return progressing('False', outcome === 'promoted' ? 'Promoted' : 'RolloutComplete', `${stableImage} is rolled out`);
}

/** Degraded: something needs attention. */
function degradedCondition(input: AlgorithmStatusInput, policy: AnalysisPolicy): Stated {
  const {
    algorithm,
    rollout: { plan, outcome, report },
    stable,
    applyFailure,
    previous,
  } = input;
  const threshold = successThreshold(algorithm);
  const degraded = (reason: string, message: string): Stated => ({ type: 'Degraded', status: 'True', reason, message });
  if (applyFailure) return degraded('ApplyFailed', applyFailure);
  if (plan.mode === 'rolledBack') {
    const kept = findMessage(previous.conditions, 'Degraded', 'CanaryRolledBack') ?? `${plan.state.rolledBackImage} was rolled back`;
    return degraded('CanaryRolledBack', outcome === 'rolledBack' ? rollbackMessage(plan, report, threshold, policy) : kept);
  }
  if (outcome === 'failing') return degraded('CanaryBelowThreshold', failingMessage(plan, report, threshold, policy));
  if (stable?.failure) return degraded('ProgressDeadlineExceeded', stable.failure);
  return { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'no problem detected' };
}

/**
 * What this reconcile's rollout step is worth telling (nothing when nothing happened): Warnings
 * become Events, routine Normal steps log lines (the reconciler decides).
 */
export function rolloutEvents(
  algorithm: AlgorithmResource,
  rollout: Rollout,
  previous: AlgorithmStatus,
  policy: AnalysisPolicy,
  split?: TrafficSplit,
): AlgorithmEvent[] {
  const { plan, outcome, report } = rollout;
  const threshold = successThreshold(algorithm);
  const last = plan.state.lastAnalysis;
  const events: AlgorithmEvent[] = [];
  const weight = algorithm.spec.lifecycle?.canaryWeight ?? 0;
  if (plan.started) {
    // The share in effect, which replica counts round: 1 canary beside 3 stable replicas serve 25 %, whatever was asked.
    const share = split ? describeSplit(split) : `${weight}% of traffic`;
    const message = `canary ${plan.state.canaryImage} started beside ${plan.state.stableImage} with ${share}`;
    events.push({ type: 'Normal', reason: 'CanaryStarted', message });
  }
  if (report.error) {
    const message = `${report.error}; the canary is not promoted while it cannot be analysed`;
    events.push({ type: 'Warning', reason: 'AnalysisUnavailable', message });
  }
  if (outcome === 'promoted') {
    const successes = last?.consecutiveSuccesses ?? 0;
    const message = `canary ${plan.state.stableImage} promoted after ${successes} consecutive checks at or above ${threshold}`;
    events.push({ type: 'Normal', reason: 'Promoted', message });
  } else if (outcome === 'rolledBack') {
    events.push({ type: 'Warning', reason: 'RolledBack', message: rollbackMessage(plan, report, threshold, policy) });
  } else if (outcome === 'failing' && (report.ran || report.canaryFailure)) {
    events.push({ type: 'Warning', reason: 'CanaryBelowThreshold', message: failingMessage(plan, report, threshold, policy) });
  } else if (outcome === 'inconclusive' && previous.phase !== 'Inconclusive') {
    const message = `no samples for canary ${plan.state.canaryImage} in ${last?.consecutiveNoData ?? 0} consecutive checks: not promoted`;
    events.push({ type: 'Warning', reason: 'AnalysisInconclusive', message });
  }
  return events;
}

function successThreshold(algorithm: AlgorithmResource): number {
  return algorithm.spec.lifecycle?.successThreshold ?? 0.99;
}

function withoutTimestamp(status: AlgorithmStatus): Omit<AlgorithmStatus, 'lastReconciled'> {
  const { lastReconciled: _ignored, ...rest } = status;
  return rest;
}

function describeAnalysis(analysis: RolloutState['lastAnalysis'], threshold: number): string {
  if (!analysis) return 'waiting for the first analysis';
  const value = analysis.value === undefined ? 'no samples' : `success rate ${analysis.value.toFixed(4)}`;
  const streaks =
    `${analysis.consecutiveSuccesses ?? 0} successes, ${analysis.consecutiveFailures ?? 0} failures, ` +
    `${analysis.consecutiveNoData ?? 0} empty in a row`;
  return `last analysis ${analysis.result}: ${value} (threshold ${threshold}); ${streaks}`;
}

function rollbackMessage(plan: RolloutPlan, report: AnalysisReport, threshold: number, policy: AnalysisPolicy): string {
  const image = plan.state.rolledBackImage ?? plan.state.canaryImage;
  if (report.canaryFailure) return `${report.canaryFailure}; rolled back to ${plan.state.stableImage}`;
  const value = plan.state.lastAnalysis?.value;
  const failures = plan.state.lastAnalysis?.consecutiveFailures ?? policy.failureThreshold;
  return (
    `canary ${image} success rate ${value === undefined ? 'unknown' : value.toFixed(4)} below successThreshold ${threshold} ` +
    `for ${failures} consecutive checks (failureThreshold ${policy.failureThreshold}); rolled back to ${plan.state.stableImage}`
  );
}

function failingMessage(plan: RolloutPlan, report: AnalysisReport, threshold: number, policy: AnalysisPolicy): string {
  if (report.canaryFailure) return `${report.canaryFailure}; kept because rollbackOnDrift is false`;
  const value = plan.state.lastAnalysis?.value;
  const rate = value === undefined ? 'unknown' : value.toFixed(4);
  const failures = plan.state.lastAnalysis?.consecutiveFailures ?? 0;
  return (
    `canary ${plan.state.canaryImage} success rate ${rate} below successThreshold ${threshold} ` +
    `for ${failures} consecutive checks (failureThreshold ${policy.failureThreshold}); kept because rollbackOnDrift is false`
  );
}

function findMessage(conditions: AlgorithmStatus['conditions'], type: string, reason: string): string | undefined {
  return conditions?.find((x) => x.type === type && x.reason === reason)?.message;
}
