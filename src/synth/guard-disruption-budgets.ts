// A PodDisruptionBudget reaches past its namespace: the eviction API consults it whenever anyone
// drains the node its pods run on. One that allows no eviction (maxUnavailable 0, or a
// minAvailable as high as the pods) holds up every drain of that node — cluster maintenance —
// for as long as the preview lives. Previews need no budget, so the kind is off the default
// allow-list. Where an operator allows it, a budget that plainly allows no eviction is refused;
// others can still hold drains up (two budgets over one pod, a budget over bare pods, pods kept
// unready), so allowing the kind accepts that.
import type { Manifest } from '../../constructs/index.js';
import { asObject } from './guard-json.js';
import type { Violate } from './guard-rendered-objects.js';

/** `maxUnavailable` of at least one pod, or at least 1 % (the disruption controller rounds a percentage up). */
function allowsOneEviction(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 1;
  const percent = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  return percent !== null && Number(percent[1]) >= 1;
}

export function checkDisruptionBudget(object: Manifest, violate: Violate): void {
  const spec = asObject(object.spec) ?? {};
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
