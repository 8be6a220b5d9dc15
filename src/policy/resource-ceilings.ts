// The most an environment's ResourceQuota may hold, whatever its repository's `preview.yaml`
// asks for: the quota is what bounds a preview's pods, and a trusted author who could size it
// freely (100,000 CPUs, a petabyte) would bound nothing, for each of as many pull requests as
// are open. A request above a ceiling is cut to it, as a `ttl` above `maxTtl` is, with a note
// the PR comment shows. Pure; the quantities are those `preview.yaml` accepts.

/** Resources as `preview.yaml`'s `resources` names them. */
export interface EnvironmentResources {
  cpu?: string;
  memory?: string;
  storage?: string;
  pods?: number;
  gpu?: number;
}

/** The policy's ceilings; `null`: no ceiling. */
export interface ResourceCeilings {
  /** CPU of all containers' limits (default 32). */
  cpu: string | null;
  /** Memory of all containers' limits (default 64Gi). */
  memory: string | null;
  /** Storage all volume claims request (default 500Gi). */
  storage: string | null;
  /** Pods (default 200). */
  pods: number | null;
  /**
   * GPUs per GPU resource the environment's algorithms use (default none). With a ceiling, an
   * environment whose `preview.yaml` sets no `resources.gpu` gets this many, not an unbounded number.
   */
  gpu: number | null;
}

export const defaultResourceCeilings: Readonly<ResourceCeilings> = Object.freeze({
  cpu: '32',
  memory: '64Gi',
  storage: '500Gi',
  pods: 200,
  gpu: null,
});

const quantityPattern = /^\+?([0-9]+(?:\.[0-9]+)?)(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/;
const suffixes: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a Kubernetes quantity in `preview.yaml`'s form (`500m`, `2`, `512Mi`), or undefined. */
export function quantityValue(text: string): number | undefined {
  const match = quantityPattern.exec(text.trim());
  return match ? Number(match[1]) * suffixes[match[2] ?? '']! : undefined;
}

/** Why a ceiling is not one (for the policy's validation), or undefined. */
export function ceilingProblem(key: keyof ResourceCeilings, value: unknown): string | undefined {
  if (value === null) return undefined;
  if (key === 'pods' || key === 'gpu') {
    return typeof value === 'number' && Number.isInteger(value) && value >= (key === 'gpu' ? 0 : 1)
      ? undefined
      : `must be a whole number of at least ${key === 'gpu' ? 0 : 1}, or null for no ceiling`;
  }
  return typeof value === 'string' && quantityValue(value) !== undefined
    ? undefined
    : 'must be a Kubernetes quantity such as 32 or 64Gi, or null for no ceiling';
}

/**
 * `resources` within `ceilings`, and a note for each value the repository asked for that was cut.
 * A total it leaves unset gets the quota's default (`defaults`), or the ceiling where that is lower.
 */
export function capResources(
  resources: Readonly<EnvironmentResources> | undefined,
  ceilings: Readonly<ResourceCeilings>,
  defaults: Readonly<{ cpu: string; memory: string; storage: string; pods: number }>,
): { resources: EnvironmentResources | undefined; notes: string[] } {
  const capped: EnvironmentResources = { ...resources };
  const notes: string[] = [];
  const cut = (key: keyof EnvironmentResources, asked: string | number | undefined, ceiling: string | number) => {
    if (asked !== undefined) notes.push(`resources.${key} ${asked} is above the operator's ceiling: cut to ${ceiling}`);
  };
  for (const key of ['cpu', 'memory', 'storage'] as const) {
    const ceiling = ceilings[key];
    if (ceiling === null) continue;
    const asked = capped[key];
    if ((quantityValue(asked ?? defaults[key]) ?? Number.POSITIVE_INFINITY) > quantityValue(ceiling)!) {
      cut(key, asked, ceiling);
      capped[key] = ceiling;
    }
  }
  const podsCeiling = ceilings.pods;
  if (podsCeiling !== null && (capped.pods ?? defaults.pods) > podsCeiling) {
    cut('pods', capped.pods, podsCeiling);
    capped.pods = podsCeiling;
  }
  const gpuCeiling = ceilings.gpu;
  if (gpuCeiling !== null && capped.gpu !== undefined && capped.gpu > gpuCeiling) {
    cut('gpu', capped.gpu, gpuCeiling);
    capped.gpu = gpuCeiling;
  }
  // Without a GPU quota of its own, the environment's GPUs would be bounded by nothing.
  if (ceilings.gpu !== null && capped.gpu === undefined) capped.gpu = ceilings.gpu;
  const untouched = resources === undefined && Object.keys(capped).length === 0;
  return { resources: untouched ? undefined : capped, notes };
}
