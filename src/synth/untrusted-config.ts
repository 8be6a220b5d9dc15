// The configuration of an untrusted pull request (a fork, or an author outside the trusted
// associations): the base branch's `.preview/preview.yaml`, which a maintainer merged, with
// only the values a contributor may change taken from the pull request's copy. Today that is
// an algorithm's image tag (or digest) within the same image repository: a PR can preview the
// image its CI built, never another image, more resources, other hosts or other databases.
import type { AlgorithmConfig, PreviewConfig } from '../../constructs/index.js';

export interface UntrustedConfigMerge {
  config: PreviewConfig;
  /** What came from the pull request, e.g. `algorithms[api].image: registry/x:pr-7`. */
  taken: string[];
  /** What the pull request changed and was ignored, for the PR comment. */
  ignored: string[];
}

/** `registry.example.com:5000/team/app:1.2@sha256:…` → `registry.example.com:5000/team/app`. */
export function imageRepository(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const lastColon = withoutDigest.lastIndexOf(':');
  return lastColon > lastSlash ? withoutDigest.slice(0, lastColon) : withoutDigest;
}

/**
 * The base configuration with the image tags the pull request proposes for algorithms the
 * base declares, when the image repository is unchanged. `proposed` undefined: the PR has no
 * (or no valid) configuration, and the base applies unchanged.
 */
export function mergeUntrustedConfig(base: PreviewConfig, proposed: PreviewConfig | undefined): UntrustedConfigMerge {
  const taken: string[] = [];
  const ignored: string[] = [];
  const proposedAlgorithms = new Map((proposed?.algorithms ?? []).map((a) => [a.name, a]));
  const algorithms: AlgorithmConfig[] = (base.algorithms ?? []).map((algorithm) => {
    const candidate = proposedAlgorithms.get(algorithm.name);
    if (!candidate || candidate.image === algorithm.image) return algorithm;
    if (imageRepository(candidate.image) !== imageRepository(algorithm.image)) {
      ignored.push(`algorithms[${algorithm.name}].image: ${candidate.image} is another image than ${imageRepository(algorithm.image)}`);
      return algorithm;
    }
    taken.push(`algorithms[${algorithm.name}].image: ${candidate.image}`);
    return { ...algorithm, image: candidate.image };
  });
  if (proposed) {
    const baseNames = new Set((base.algorithms ?? []).map((a) => a.name));
    for (const name of proposedAlgorithms.keys())
      if (!baseNames.has(name)) ignored.push(`algorithms[${name}]: not declared on the base branch`);
    const { algorithms: _a, ...proposedRest } = proposed;
    const { algorithms: _b, ...baseRest } = base;
    for (const key of new Set([...Object.keys(proposedRest), ...Object.keys(baseRest)])) {
      if (!sameValue((baseRest as Record<string, unknown>)[key], (proposedRest as Record<string, unknown>)[key]))
        ignored.push(`${key}: changes from untrusted pull requests are not applied`);
    }
    for (const algorithm of base.algorithms ?? []) {
      const candidate = proposedAlgorithms.get(algorithm.name);
      if (!candidate) continue;
      const { image: _i, ...candidateRest } = candidate;
      const { image: _j, ...baseRest2 } = algorithm;
      if (!sameValue(candidateRest, baseRest2))
        ignored.push(`algorithms[${algorithm.name}]: only the image tag of an untrusted pull request is applied`);
    }
  }
  return { config: base.algorithms ? { ...base, algorithms } : base, taken, ignored };
}

/** Deep equality of parsed YAML values, whatever the order of keys. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a)
      .filter((k) => (a as Record<string, unknown>)[k] !== undefined)
      .sort();
    const kb = Object.keys(b)
      .filter((k) => (b as Record<string, unknown>)[k] !== undefined)
      .sort();
    return sameValue(ka, kb) && ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}
