// The three conditions kstatus reads (sigs.k8s.io/cli-utils/pkg/kstatus), and so Flux's
// healthChecks, `kubectl wait` and Argo CD's health checks: Ready (normal-true: the object does
// what its spec asks), Reconciling and Stalled (abnormal-true: the controller is still working on
// it; it cannot get there without a change). A controller states which of three situations an
// object is in; this sets all three conditions for it, each carrying the generation it describes.
import { setCondition, type Condition, type ConditionInput } from './conditions.js';

export const kstatusTypes = { ready: 'Ready', reconciling: 'Reconciling', stalled: 'Stalled' } as const;

export type KstatusSituation =
  /** Ready: nothing left to do (Ready itself is the controller's to state). */
  | { state: 'current' }
  /** Still converging: a rollout, a wait for a dependency, a queue. */
  | { state: 'progressing'; reason: string; message: string }
  /** Cannot get further without a change by someone: a refused spec, a failed rollout. */
  | { state: 'stalled'; reason: string; message: string };

/** The Reconciling and Stalled conditions of a situation (Ready aside). */
export function kstatusConditions(situation: KstatusSituation): Omit<ConditionInput, 'observedGeneration'>[] {
  const { reconciling, stalled } = kstatusTypes;
  switch (situation.state) {
    case 'current':
      return [
        { type: reconciling, status: 'False', reason: 'Reconciled', message: 'the desired state is reached' },
        { type: stalled, status: 'False', reason: 'Reconciled', message: 'the desired state is reached' },
      ];
    case 'progressing':
      return [
        { type: reconciling, status: 'True', reason: situation.reason, message: situation.message },
        { type: stalled, status: 'False', reason: 'Progressing', message: 'progressing: see the Reconciling condition' },
      ];
    case 'stalled':
      return [
        { type: reconciling, status: 'False', reason: 'Stalled', message: 'no progress without a change: see the Stalled condition' },
        { type: stalled, status: 'True', reason: situation.reason, message: situation.message },
      ];
  }
}

/** `conditions` with Reconciling and Stalled set for `situation`, at `generation`. */
export function setKstatusConditions(
  conditions: readonly Condition[] | undefined,
  situation: KstatusSituation,
  generation: number | undefined,
  now: Date,
): Condition[] {
  let next = [...(conditions ?? [])];
  for (const condition of kstatusConditions(situation)) next = setCondition(next, { ...condition, observedGeneration: generation }, now);
  return next;
}
