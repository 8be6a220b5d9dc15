// What the PreviewEnvironment reconciler reads of the cluster: its informers' caches (the
// environments, indexed by repository; the namespaces, all of them or the labelled ones; the
// workloads, ingresses and guards it applied), and the API server only where a cache cannot know
// (a namespace without our label, or not seen yet).
// The wiring (preview-environment.ts) hands it real informers; unit tests hand it fakes.
import { ownershipLabelKeys } from '../../constructs/index.js';
import {
  NotFoundError,
  cacheOfKind,
  type CacheReader,
  type KindRef,
  type KubeObject,
  type ObjectClient,
  type ObjectRef,
} from '../kube/index.js';
import { repositoryKey } from '../github/octokit-factory.js';
import type { EnvironmentObject } from './preview-environment-status.js';
import type { WildcardTlsInformers } from './preview-environment-wildcard-tls.js';
import { namespaceKind } from './namespace-terminating.js';

/** The environments' cache indexed by repository: every environment event asks for its siblings. */
export const repositoryIndex = 'repository';

/** What an environment's objects are cached by: its ownership label (Ingresses, guards; Namespaces, unless all are). */
export const byEnvironment = { labelSelector: ownershipLabelKeys.environment };

export { namespaceKind };
export const ingressKind: KindRef = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' };

/**
 * The namespace guards, cached so that an unchanged reconcile reads none of them from the API server
 * (ServiceAccounts: the `default` one is a guard; the repository's own are cached alongside).
 */
export const guardCacheKinds: readonly KindRef[] = [
  { apiVersion: 'v1', kind: 'ResourceQuota' },
  { apiVersion: 'v1', kind: 'LimitRange' },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
];

export interface EnvironmentInformers {
  environments: CacheReader<EnvironmentObject> & { byIndex(index: string, value: string): EnvironmentObject[] };
  namespaces: CacheReader;
  algorithms: CacheReader;
  databases: CacheReader;
  ingresses: CacheReader;
  /** The namespace guards' kinds (and ServiceAccounts), so that an unchanged reconcile reads none of them. */
  guards: CacheReader[];
  /** The wildcard certificate's Secret and its copies (the wildcard TLS modes; without them, they are read). */
  wildcardTls?: WildcardTlsInformers;
}

export class EnvironmentCaches {
  private readonly objects: CacheReader[];

  constructor(
    private readonly informers: EnvironmentInformers,
    private readonly client: ObjectClient,
  ) {
    this.objects = [informers.namespaces, informers.algorithms, informers.databases, informers.ingresses, ...informers.guards];
  }

  environment(name: string): EnvironmentObject | undefined {
    return this.informers.environments.get(name);
  }

  /** The environments of `env`'s repository, itself included. */
  siblings(env: EnvironmentObject): EnvironmentObject[] {
    return this.informers.environments.byIndex(repositoryIndex, repositoryKey(env.spec.repository));
  }

  /** The namespace `name`, whoever it belongs to. */
  async namespace(name: string): Promise<KubeObject | undefined> {
    const cached = this.informers.namespaces.get(name);
    if (cached) return cached;
    // Not cached (without our label, or the watch lags): it must still be seen before we touch it.
    return this.client.get({ ...namespaceKind, name }).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
  }

  /** The cached copy of an object of a kind the controller watches (undefined: not cached, or not watched). */
  cached(ref: ObjectRef): KubeObject | undefined {
    const found = this.lookup(ref);
    return found === 'absent' ? undefined : found;
  }

  /** `cached`, but `'absent'` where the synced cache of a watched kind has none (an Applier's `lookup`). */
  lookup(ref: ObjectRef): KubeObject | 'absent' | undefined {
    const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    return cacheOfKind(this.objects, ref)?.lookup(key);
  }

  /** How far the cache of `ref`'s kind has caught up (its watch's last resourceVersion), for the Applier's `seen`. */
  seen(ref: ObjectRef): string | undefined {
    return cacheOfKind(this.objects, ref)?.lastResourceVersion?.();
  }
}
