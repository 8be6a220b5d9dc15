// A PodDisruptionBudget reaches past its namespace: the eviction API consults it whenever anyone
// drains the node its pods run on. One that allows no eviction (maxUnavailable 0, or a
// minAvailable as high as the pods) holds up every drain of that node — cluster maintenance —
// for as long as the preview lives. Previews need no budget, so the kind is off the default
// allow-list. Where an operator allows it, a budget that plainly allows no eviction is refused, and
// so is one that protects unready pods (`unhealthyPodEvictionPolicy` other than AlwaysAllow: pods
// an image keeps unready would refuse every eviction); others can still hold drains up (two
// budgets over one pod, a budget over bare pods), so allowing the kind accepts that.
//
// An Algorithm's own budget is the operator's (its controller writes it, over the Algorithm's
// label): no rendered pod may carry the Algorithm controller's labels, or a Job's pods under the
// label (the disruption controller finds no scale for them and allows nothing) would turn that
// budget against every drain.
import { algorithmLabel, type Manifest } from '../../constructs/index.js';
import { asObject } from './guard-json.js';
import type { Violate } from './guard-rendered-objects.js';

/** `maxUnavailable` of at least one pod, or at least 1 % (the disruption controller rounds a percentage up). */
function allowsOneEviction(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1;
  const percent = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  return percent !== null && Number(percent[1]) >= 1;
}

/** The prefix of the labels the Algorithm controller selects its pods by (its Service, its disruption budget). */
const algorithmLabelPrefix = algorithmLabel.slice(0, algorithmLabel.indexOf('/') + 1);

export function checkDisruptionBudget(object: Manifest, violate: Violate): void {
  const spec = asObject(object.spec) ?? {};
  if (spec.unhealthyPodEvictionPolicy !== 'AlwaysAllow') {
    violate(
      'disruption-budget',
      'spec.unhealthyPodEvictionPolicy must be AlwaysAllow: otherwise pods kept unready refuse every eviction and hold up node drains',
    );
  }
  if (spec.minAvailable !== undefined) {
    violate(
      'disruption-budget',
      'spec.minAvailable must not be set: at or above the pods running, it refuses every eviction and holds up node drains; set maxUnavailable',
    );
  } else if (!allowsOneEviction(spec.maxUnavailable)) {
    violate(
      'disruption-budget',
      `spec.maxUnavailable must be at least 1 (or 1%), not ${JSON.stringify(spec.maxUnavailable ?? null)}: a budget that allows no eviction holds up node drains`,
    );
  }
}

/** A rendered pod (or template) must not carry the labels the Algorithm controller's budget and Service select. */
export function checkAlgorithmPodLabels(pod: { labels: Record<string, unknown> | undefined; path: string }, violate: Violate): void {
  for (const key of Object.keys(pod.labels ?? {}).filter((k) => k.startsWith(algorithmLabelPrefix))) {
    const where = pod.path.replace(/spec$/, 'metadata.labels');
    violate(
      'disruption-budget',
      `${where}["${key}"] is the Algorithm controller's: its disruption budget would count these pods and could refuse every eviction; use a label of your own`,
    );
  }
}
