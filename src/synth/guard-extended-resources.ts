// Extended resources (GPUs and the like): what the namespace's ResourceQuota bounds is the
// environment's budget of them. The quota names each resource it bounds (`requests.nvidia.com/gpu`);
// a pod asking for one it does not name is bounded by nothing, past the ceiling the operator set.
// So where the quota bounds any, pods and Algorithms may ask for those alone; where it bounds none
// (no GPU total in preview.yaml and no `budgets.maxResources.gpu`), none is bounded anyway.
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

/** An Algorithm's GPUs become a limit and a toleration its controller writes: the same rule, on its spec. */
export function checkAlgorithmGpu(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  const resources = asObject(asObject(object.spec)?.resources);
  const count = resources?.gpuCount;
  if (typeof count !== 'number' || count <= 0) return;
  const name = typeof resources?.gpu === 'string' ? resources.gpu : 'nvidia.com/gpu';
  if (!unbounded(name, policy)) return;
  violate(
    'unbounded-resource',
    `spec.resources.gpu is ${name}, which the namespace's quota does not bound (it bounds ${boundedNames(policy)}); name it in preview.yaml's algorithms[].resources.gpu`,
  );
}
