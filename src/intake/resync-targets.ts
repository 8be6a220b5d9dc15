// Which repositories a resync pass reads: every repository that has a PreviewEnvironment in the
// cache (its closed pull requests must be found), and every repository the policy names or the
// credential can see (a GitHub App's installations) where previews are enabled (its missed
// `opened` deliveries must be found, the very first included), each with the environments it has.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import type { KubeObject } from '../kube/kube-object.js';
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import { repositoryKey, type RepositoryName } from '../github/octokit-factory.js';

/** The cached PreviewEnvironments (the manager's informer satisfies it). */
export interface EnvironmentCache {
  list(): readonly KubeObject[];
  /** The environment as the cache holds it now (the manager's informer: by name). */
  get?(name: string): KubeObject | undefined;
  /** Resolves once the cache holds the first full list (the runnable waits for it). */
  waitForSync?(signal?: AbortSignal): Promise<void>;
}

export interface CachedEnvironment {
  name: string;
  number: number;
  headSha: string | undefined;
  baseRef: string | undefined;
  object: KubeObject;
}

export interface ResyncTarget {
  repository: RepositoryName;
  /** Its environments, by pull request number. */
  environments: Map<number, CachedEnvironment>;
}

/**
 * The repositories to read: those with environments first (in cache order), then those only
 * configured, then those only `visible` (the App's installations) whose policy enables previews.
 */
export function resyncTargets(cache: EnvironmentCache, config: PolicyConfig, visible: readonly RepositoryName[] = []): ResyncTarget[] {
  const targets = cachedEnvironments(cache);
  const add = (repository: RepositoryName) => {
    const key = repositoryKey(repository);
    if (!targets.has(key)) targets.set(key, { repository, environments: new Map() });
  };
  for (const fullName of Object.keys(config.repositories)) {
    const [owner, name, ...rest] = fullName.split('/');
    if (owner && name && rest.length === 0) add({ owner, name });
  }
  for (const repository of visible) {
    if (effectivePolicy(config, repository).enabled) add({ owner: repository.owner, name: repository.name });
  }
  return [...targets.values()];
}

/** The environments of the cache, by repository, with what the resync needs of each. */
function cachedEnvironments(cache: EnvironmentCache): Map<string, ResyncTarget> {
  const byRepository = new Map<string, ResyncTarget>();
  for (const object of cache.list()) {
    const spec = (object as KubeObject & { spec?: Partial<PreviewEnvironmentSpec> }).spec;
    const owner = spec?.repository?.owner;
    const name = spec?.repository?.name;
    const number = spec?.pullRequest?.number;
    if (typeof owner !== 'string' || typeof name !== 'string' || typeof number !== 'number' || !object.metadata?.name) continue;
    const key = repositoryKey({ owner, name });
    let target = byRepository.get(key);
    if (!target) {
      target = { repository: { owner, name }, environments: new Map() };
      byRepository.set(key, target);
    }
    const { headSha, baseRef } = spec?.pullRequest ?? {};
    target.environments.set(number, { name: object.metadata.name, number, headSha, baseRef, object });
  }
  return byRepository;
}
