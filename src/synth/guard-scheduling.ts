// Where a preview's pods may run, and what they may push aside. The scheduler is shared with
// every other tenant of the cluster: `nodeName` skips it and lands a pod on a node of the author's
// choice (a control-plane node, another team's); a PriorityClass lets a pod preempt (evict) other
// namespaces' pods; a toleration lets it onto nodes tainted for someone else (production, GPUs,
// system workloads); a RuntimeClass brings tolerations and a node selector of its own (admission
// merges its `scheduling` into the pod). So: no nodeName ever; priority classes, runtime classes
// and toleration keys only from the operator's allow-lists (default none). Always allowed, because the API server would add them
// itself: tolerations of the two node conditions every pod gets (DefaultTolerationSeconds), which
// only delay an eviction, and of the extended resources the pod requests, such as
// `nvidia.com/gpu` (ExtendedResourceToleration) — where the namespace's quota bounds them: a
// toleration of a GPU nothing bounds would let a preview take a tenant's tainted GPU nodes whole
// (guard-extended-resources.ts; an Algorithm's GPUs get their toleration from its controller). Only an amount
// above zero counts (the scheduler fits a zero anywhere), and only a name the API server takes for
// an extended resource: one naming `kubernetes.io/` anywhere is native to it, checked no further,
// so `node-role.kubernetes.io/control-plane: 0` would otherwise let a pod tolerate that taint.
import { asObjects } from './guard-json.js';
import { extendedResourceRequests } from './guard-extended-resources.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** Tolerated by every pod for a while anyway: allowed, with effect NoExecute, whatever the setting. */
const nodeConditionKeys = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

export function checkScheduling(pod: { spec: Record<string, unknown>; path: string }, policy: RenderPolicy, violate: Violate): void {
  const spec = pod.spec;
  if (spec.nodeName !== undefined && spec.nodeName !== '') {
    violate('scheduling', `${pod.path}.nodeName puts the pod on node "${String(spec.nodeName)}" past the scheduler; leave it unset`);
  }
  const classes = policy.priorityClasses ?? [];
  if (spec.priorityClassName !== undefined && spec.priorityClassName !== '' && !classes.includes(String(spec.priorityClassName))) {
    const allowed = classes.length > 0 ? `previews may use ${classes.join(', ')}` : "previews use the cluster's default priority";
    const name = String(spec.priorityClassName);
    violate('scheduling', `${pod.path}.priorityClassName is "${name}", which could preempt other namespaces' pods; ${allowed}`);
  }
  const runtimes = policy.runtimeClasses ?? [];
  if (spec.runtimeClassName !== undefined && spec.runtimeClassName !== null && !runtimes.includes(String(spec.runtimeClassName))) {
    const allowed = runtimes.length > 0 ? `previews may use ${runtimes.join(', ')}` : "previews use the cluster's default runtime";
    const name = String(spec.runtimeClassName);
    violate(
      'scheduling',
      `${pod.path}.runtimeClassName is "${name}", whose tolerations and node selector place the pod on nodes kept for it; ${allowed}`,
    );
  }
  const bounded = policy.quotaExtendedResources ?? [];
  const requested = extendedResourceRequests(spec).filter((name) => bounded.includes(name));
  const keys = [...(policy.tolerationKeys ?? []), ...requested];
  asObjects(spec.tolerations).forEach((toleration, i) => {
    const key = typeof toleration.key === 'string' ? toleration.key : '';
    if (nodeConditionKeys.has(key) && toleration.effect === 'NoExecute') return;
    if (key !== '' && keys.includes(key)) return;
    const what = key === '' ? 'tolerates every taint' : `tolerates the taint "${key}"`;
    const allowed = keys.length > 0 ? `tolerations may name ${keys.join(', ')}` : 'previews run on untainted nodes';
    violate('scheduling', `${pod.path}.tolerations[${i}] ${what}, which lets the pod onto nodes kept for others; ${allowed}`);
  });
}
