// Extended resources (GPUs and the like): what the namespace's ResourceQuota bounds is the
// environment's budget of them. The quota names each resource it bounds (`requests.nvidia.com/gpu`);
// a pod asking for one it does not name is bounded by nothing, past the ceiling the operator set.
// So where the quota bounds any, pods may ask for those alone; where it bounds none (no GPU total in
// preview.yaml and no `budgets.maxResources.gpu`), none is bounded anyway, but no toleration takes
// a pod onto the nodes tainted for them (guard-scheduling.ts). An Algorithm's GPUs come with the
// toleration its controller writes under the operator's identity: an Algorithm may ask only for a
// GPU the quota names, whether or not it bounds others.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects } from './guard-json.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';

/** As the API server tells one: a domain-prefixed name, not native (`kubernetes.io/` anywhere), not a quota's `requests.` form. */
function isExtendedResource(name: string): boolean {
  return name.includes('/') && !name.includes('kubernetes.io/') && !name.startsWith('requests.');
}

/** Extended resources the pod's containers request or limit, above zero (the scheduler fits a zero anywhere). */
export function extendedResourceRequests(spec: Record<string, unknown>): string[] {
  const names = new Set<string>();
  for (const container of [...asObjects(spec.initContainers), ...asObjects(spec.containers)]) {
    const resources = asObject(container.resources);
    for (const amounts of [resources?.limits, resources?.requests]) {
      for (const [name, amount] of Object.entries(asObject(amounts) ?? {})) {
        if (isExtendedResource(name) && Number.parseFloat(String(amount)) > 0) names.add(name);
      }
    }
  }
  return [...names];
}

/** The extended resources a ResourceQuota bounds (its `requests.<name>` and `<name>` keys). */
export function quotaExtendedResources(quota: Manifest): string[] {
  const hard = asObject(asObject(quota.spec)?.hard) ?? {};
  return Object.keys(hard)
    .map((key) => key.replace(/^requests\./, ''))
    .filter(isExtendedResource);
}

/** Whether the quota leaves `name` unbounded while it bounds others. */
function unbounded(name: string, policy: RenderPolicy): boolean {
  const bounded = policy.quotaExtendedResources ?? [];
  return bounded.length > 0 && !bounded.includes(name);
}

function boundedNames(policy: RenderPolicy): string {
  return (policy.quotaExtendedResources ?? []).join(', ');
}

export function checkPodExtendedResources(
  pod: { spec: Record<string, unknown>; path: string },
  policy: RenderPolicy,
  violate: Violate,
): void {
  for (const name of extendedResourceRequests(pod.spec).filter((n) => unbounded(n, policy))) {
    violate(
      'unbounded-resource',
      `${pod.path} asks for ${name}, which the namespace's quota does not bound (it bounds ${boundedNames(policy)}); name it in preview.yaml's algorithms[].resources.gpu`,
    );
  }
}

/** An Algorithm's GPUs become a limit and a toleration its controller writes: only GPUs the quota names. */
export function checkAlgorithmGpu(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  const resources = asObject(asObject(object.spec)?.resources);
  const count = resources?.gpuCount;
  if (typeof count !== 'number' || count <= 0) return;
  const name = typeof resources?.gpu === 'string' ? resources.gpu : 'nvidia.com/gpu';
  const bounded = policy.quotaExtendedResources ?? [];
  if (bounded.includes(name)) return;
  const quota =
    bounded.length > 0
      ? `the namespace's quota does not bound it (it bounds ${boundedNames(policy)}); name it in preview.yaml's algorithms[].resources.gpu`
      : "the namespace's quota bounds no GPU; set a GPU total in preview.yaml's resources.gpu (or the operator a ceiling, budgets.maxResources.gpu)";
  violate('unbounded-resource', `spec.resources.gpu asks for ${count} ${name} per pod, but ${quota}`);
}
