// Which image runs where, decided from the spec and the rollout state kept in status. Pure:
// the reconciler feeds it the Algorithm, what the analysis found, and the time. Keeping the
// state in status (not in memory) is what lets a restarted operator resume a canary exactly.
import type { AlgorithmAnalysis, AlgorithmSpec } from '../../constructs/index.js';
import type { Verdict } from './canary-analysis.js';

/** The rollout state persisted in the Algorithm's status. */
export interface RolloutState {
  /** What the stable Deployment runs. */
  stableImage: string;
  /** The image under analysis (absent when no canary runs). */
  canaryImage?: string;
  /** When that canary started (ISO time). */
  canaryStartTime?: string;
  /** The image last rolled back; no canary starts for it again. */
  rolledBackImage?: string;
  lastAnalysis?: AlgorithmAnalysis;
}

/**
 * - `steady`: spec.image runs on the stable track (possibly still rolling out), no canary.
 * - `canary`: spec.image runs as a canary beside the stable image, under analysis.
 * - `rolledBack`: spec.image was rolled back; the stable image keeps serving.
 */
export type RolloutMode = 'steady' | 'canary' | 'rolledBack';

export interface RolloutPlan {
  mode: RolloutMode;
  state: RolloutState;
  /** True when this plan starts a new canary (its analysis starts from zero). */
  started: boolean;
}

/** Where the stable image comes from when the status does not say (first reconcile, or status lost). */
export interface ObservedStable {
  /** The image of the stable Deployment as it runs now, if it exists. */
  image?: string;
}

export function planRollout(
  spec: AlgorithmSpec,
  previous: Partial<RolloutState> | undefined,
  observed: ObservedStable,
  now: string,
): RolloutPlan {
  const stableImage = previous?.stableImage || observed.image || spec.image;
  const weight = spec.lifecycle?.canaryWeight ?? 0;
  const lastAnalysis = previous?.lastAnalysis;
  const keep = (state: RolloutState): RolloutState => (lastAnalysis ? { ...state, lastAnalysis } : state);
  if (spec.image === stableImage) return { mode: 'steady', state: keep({ stableImage }), started: false };
  // canaryWeight 0: a plain rolling update of the stable track.
  if (weight <= 0) return { mode: 'steady', state: keep({ stableImage: spec.image }), started: false };
  if (spec.image === previous?.rolledBackImage) {
    return { mode: 'rolledBack', state: keep({ stableImage, rolledBackImage: spec.image }), started: false };
  }
  if (previous?.canaryImage === spec.image && previous.canaryStartTime) {
    return {
      mode: 'canary',
      state: keep({ stableImage, canaryImage: spec.image, canaryStartTime: previous.canaryStartTime }),
      started: false,
    };
  }
  // A new canary (or a different image replacing the one under analysis): analysis starts over.
  return { mode: 'canary', state: { stableImage, canaryImage: spec.image, canaryStartTime: now }, started: true };
}

/** What happened to the canary once the verdict is taken into account. */
export type RolloutOutcome =
  | 'none'
  /** Still under analysis. */
  | 'analysing'
  /** Promoted now: the stable track takes the canary's image. */
  | 'promoted'
  /** Rolled back now: canary removed, stable untouched. */
  | 'rolledBack'
  /** Below threshold for failureThreshold checks, kept because rollbackOnDrift is false. */
  | 'failing'
  /** No samples for failureThreshold checks: paused, neither promoted nor rolled back. */
  | 'inconclusive';

export interface ConcludedRollout {
  plan: RolloutPlan;
  outcome: RolloutOutcome;
}

/** Applies the analysis verdict to a canary plan. */
export function concludeRollout(plan: RolloutPlan, verdict: Verdict, rollbackOnDrift: boolean): ConcludedRollout {
  if (plan.mode !== 'canary') return { plan, outcome: 'none' };
  const { stableImage, canaryImage, lastAnalysis } = plan.state;
  switch (verdict) {
    case 'promote':
      return {
        plan: { mode: 'steady', state: { stableImage: canaryImage!, ...(lastAnalysis ? { lastAnalysis } : {}) }, started: false },
        outcome: 'promoted',
      };
    case 'fail':
      if (!rollbackOnDrift) return { plan, outcome: 'failing' };
      return {
        plan: {
          mode: 'rolledBack',
          state: { stableImage, rolledBackImage: canaryImage!, ...(lastAnalysis ? { lastAnalysis } : {}) },
          started: false,
        },
        outcome: 'rolledBack',
      };
    case 'inconclusive':
      return { plan, outcome: 'inconclusive' };
    case 'continue':
      return { plan, outcome: 'analysing' };
  }
}

/**
 * Fixed replicas of the canary: its share of the total, rounded up, at least one (a canary
 * with no pod would never be analysed). The autoscaler only ever scales the stable track.
 */
export function canaryReplicas(totalReplicas: number, weightPercent: number): number {
  if (weightPercent <= 0) return 0;
  return Math.max(1, Math.ceil((totalReplicas * weightPercent) / 100));
}

/** The canary's share of ready pods in percent (its share of traffic without a mesh). */
export function replicaWeight(readyCanary: number, readyStable: number): number {
  const total = readyCanary + readyStable;
  return total === 0 ? 0 : Math.round((readyCanary * 100) / total);
}
