// When an Algorithm's status may wait. A first deploy whose Deployment is available seconds after
// it is created used to write Pending, then Progressing, then Running: three status writes (and
// three wake-ups of the PreviewEnvironment watching it) of which a user sees one. Pure progress —
// a phase of Pending or Progressing, its replica counts, observedGeneration — now waits until the
// rollout has had the progress interval since its workloads were last applied and since the last
// status write. The reconciler requeues itself for the end of the wait; the Deployment's own
// events wake it the moment it is available, and Running goes out at once. Level-triggered:
// nothing is lost, only coalesced; a restart at worst starts the wait again.
//
// What carries a decision never waits: the rollout state (the stable image, the canary and its
// analysis counters) is written the reconcile it changes, as is every phase a user acts on
// (Failed, Degraded, Canary, Inconclusive, RolledBack) and every way out of one.
import { isDeepStrictEqual } from 'node:util';
import type { AlgorithmStatus } from '../../constructs/index.js';
import type { KubeObject } from '../kube/index.js';
import { waitSince } from './progress-pacer.js';

/** What the pacing reads. */
export interface StatusPace {
  /** The status as written. */
  previous: AlgorithmStatus;
  /** The status this reconcile computed. */
  next: AlgorithmStatus;
  /** This reconcile wrote workloads: a rollout (re)starts now. */
  applied: boolean;
  /** When the operator last wrote the stable Deployment (its managedFields time), if the cache has it. */
  deploymentWritten: string | undefined;
  now: number;
  /** 0: every change is written at once. */
  intervalMs: number;
}

const progressPhases = new Set<string | undefined>(['Pending', 'Progressing']);
/** Phases progress may quietly follow: none written yet, progress, or serving. */
const quietPhases = new Set<string | undefined>([undefined, 'Pending', 'Progressing', 'Running']);
const rolloutFields = ['stableImage', 'canaryImage', 'canaryStartTime', 'rolledBackImage', 'lastAnalysis'] as const;

/** Milliseconds the computed status may wait before it is written; 0: write it now. */
export function statusWait(pace: StatusPace): number {
  const { previous, next, now, intervalMs } = pace;
  if (intervalMs <= 0 || !progressPhases.has(next.phase) || !quietPhases.has(previous.phase)) return 0;
  if (!sameRolloutState(previous, next)) return 0;
  if (pace.applied) return intervalMs;
  return Math.max(waitSince(previous.lastReconciled, now, intervalMs), waitSince(pace.deploymentWritten, now, intervalMs));
}

/**
 * The rollout state is unchanged — or there was none: a status never written is decided again
 * from the spec and the stable Deployment, as after a lost status, so a plain first rollout may wait.
 */
function sameRolloutState(previous: AlgorithmStatus, next: AlgorithmStatus): boolean {
  if (previous.stableImage === undefined) return next.canaryImage === undefined && next.rolledBackImage === undefined;
  return rolloutFields.every((field) => isDeepStrictEqual(previous[field], next[field]));
}

/** When `manager` last wrote the object (not its status), else when it was created. */
export function lastWrittenBy(obj: KubeObject | undefined, manager: string): string | undefined {
  if (!obj) return undefined;
  const times = (obj.metadata.managedFields ?? [])
    .filter((entry) => entry.manager === manager && !entry.subresource && entry.time)
    .map((entry) => entry.time!);
  return times.sort().at(-1) ?? obj.metadata.creationTimestamp;
}
