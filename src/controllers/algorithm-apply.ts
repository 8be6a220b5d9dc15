// The apply step of the Algorithm reconciler: server-side apply of the rendered workloads
// (nothing written for what is already as desired, judged from the informers' caches), the
// stable Deployment's replicas handed to a field manager of their own when the HPA takes
// over, and a prune of what the Algorithm controls but no longer renders.
import {
  Applier,
  cachedLookup,
  NotFoundError,
  isControlledBy,
  refOf,
  toKubeError,
  type CacheReader,
  type KubeObject,
  type ObjectClient,
  type ObjectRef,
} from '../kube/index.js';
import { httpRouteKind } from './canary-traffic-route.js';

/** The field manager that seeds the stable Deployment's replicas once, so the HPA owns them afterwards. */
export const initialReplicasFieldManager = 'preview-operator-initial-replicas';

/** What the apply step is given besides the objects. */
export interface WorkloadSet {
  namespace: string;
  /** The Algorithm's uid: what it controls is pruned when not rendered. */
  owner: string | undefined;
  objects: KubeObject[];
  /** With autoscaling: the stable Deployment's name, its live object and the replicas it starts with. */
  handover?: { deployment: string; live: KubeObject | undefined; initialReplicas: number };
}

/** What the apply step did. */
export interface Written {
  /** Anything was created, changed or deleted. */
  wrote: boolean;
  /** The applied objects as they are now: the server's answers, or the live objects found unchanged. */
  objects: KubeObject[];
}

export class WorkloadWriter {
  private readonly applier: Applier;
  /** Live objects of kinds no informer watches (the HTTPRoute), read for the apply in progress. */
  private readonly fetched = new Map<string, KubeObject | 'absent'>();

  constructor(
    private readonly client: ObjectClient,
    private readonly owned: readonly CacheReader[],
  ) {
    const caches = cachedLookup(owned);
    this.applier = new Applier(client, { ...caches, lookup: (ref) => caches.lookup(ref) ?? this.fetched.get(fetchKey(ref)) });
  }

  /** Applies the set and prunes the rest. */
  async write(set: WorkloadSet): Promise<Written> {
    const uncached = set.objects.filter((o) => o.kind === httpRouteKind.kind);
    try {
      for (const obj of uncached) await this.fetch(refOf(obj));
      let wrote = await this.seedBeforeHandover(set);
      const results = await this.applier.apply(set.objects);
      wrote ||= results.some((r) => r.action !== 'unchanged');
      const created = results.find((r) => r.ref.kind === 'Deployment' && r.ref.name === set.handover?.deployment && r.action === 'created');
      // "Created" says only that the cache had no Deployment: one it had not seen yet may already
      // have replicas held by the autoscaler (or a seed), which must not be reset.
      if (set.handover && created && !replicasHeldByOthers(created.object, this.client.fieldManager)) {
        await this.seedReplicas(set.namespace, set.handover.deployment, set.handover.initialReplicas);
      }
      const pruned = await this.prune(set);
      return { wrote: pruned || wrote, objects: results.map((r) => r.object) };
    } finally {
      for (const obj of uncached) this.fetched.delete(fetchKey(refOf(obj)));
    }
  }

  /**
   * About to stop applying spec.replicas: hand the current value to a manager of its own first,
   * or server-side apply would reset it to the default when we let go of it. Only when we applied
   * them: a Deployment just created for an autoscaled Algorithm, seen in a cache that has not yet
   * seen its seed, holds the API server's default, which must not be seeded over the seed.
   */
  private async seedBeforeHandover({ namespace, handover }: WorkloadSet): Promise<boolean> {
    if (!handover?.live) return false;
    const { live } = handover;
    if (!replicasAppliedBy(live, this.client.fieldManager) || replicasHeldByOthers(live, this.client.fieldManager)) return false;
    const replicas = (live.spec as { replicas?: number } | undefined)?.replicas ?? handover.initialReplicas;
    await this.seedReplicas(namespace, handover.deployment, replicas);
    return true;
  }

  private async seedReplicas(namespace: string, name: string, replicas: number): Promise<void> {
    const seed = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace }, spec: { replicas } };
    await this.client.apply(seed, { fieldManager: initialReplicasFieldManager });
  }

  /** Deletes cached objects the Algorithm controls that were not rendered (the canary after a rollout, a dropped HPA). */
  private async prune({ owner, namespace, objects }: WorkloadSet): Promise<boolean> {
    const keep = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    let deleted = false;
    for (const informer of this.owned) {
      for (const obj of informer.list(namespace)) {
        if (!isControlledBy(obj, owner) || obj.metadata.deletionTimestamp) continue;
        if (keep.has(`${informer.kind.kind}/${obj.metadata.name}`)) continue;
        try {
          await this.client.delete({ ...informer.kind, namespace, name: obj.metadata.name }, { preconditions: { uid: obj.metadata.uid } });
          deleted = true;
        } catch (err) {
          if (!(err instanceof NotFoundError) && !(toKubeError(err).statusCode === 409)) throw err;
        }
      }
    }
    return deleted;
  }

  /** Reads a live object no informer holds, for the Applier's unchanged check. */
  private async fetch(ref: ObjectRef): Promise<void> {
    try {
      this.fetched.set(fetchKey(ref), await this.client.get(ref));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      this.fetched.set(fetchKey(ref), 'absent');
    }
  }
}

function fetchKey(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** True if `ours` applies the Deployment's spec.replicas (an Algorithm without autoscaling). */
function replicasAppliedBy(deployment: KubeObject, ours: string): boolean {
  return (deployment.metadata.managedFields ?? []).some((entry) => {
    const spec = entry.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined;
    return entry.manager === ours && entry.operation === 'Apply' && !!spec && 'f:replicas' in spec;
  });
}

/** True if a field manager other than `ours` owns the Deployment's spec.replicas (the seed, or an HPA's scale writes). */
function replicasHeldByOthers(deployment: KubeObject, ours: string): boolean {
  return (deployment.metadata.managedFields ?? []).some((entry) => {
    if (entry.manager === ours && entry.operation === 'Apply') return false;
    const spec = entry.fieldsV1?.['f:spec'] as Record<string, unknown> | undefined;
    return !!spec && 'f:replicas' in spec;
  });
}
