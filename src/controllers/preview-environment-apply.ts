// Writing a rendering into the cluster, and keeping it there. A new rendering (another render key
// than the last applied) goes in all or nothing: its Namespace first (owned by the
// PreviewEnvironment), then a server-side dry run of the whole set before its first write; a
// refusal applies nothing and what served before keeps serving. Leftovers of an earlier rendering
// are pruned once per rendering. The namespace's guards (its labels and annotations, NetworkPolicy,
// ResourceQuota, LimitRange, the `default` ServiceAccount) are put back as applied where anyone
// else deleted or edited them — each such change wakes its environment (`drifted`).
import {
  Applier,
  ForbiddenError,
  InvalidError,
  NoKindMatchError,
  NotFoundError,
  controllerReference,
  groupOf,
  identityOf,
  isControlledBy,
  refOf,
  type CacheReader,
  type Clock,
  type KindRef,
  type KubeObject,
  type LiveObjects,
  type Logger,
  type ObjectRef,
  type ObjectClient,
  type Ownership,
} from '../kube/index.js';
import { ownershipLabelKeys } from '../../constructs/index.js';
import type { AllowedKinds, GroupKind } from '../synth/guard-allowed-kinds.js';
import type { EnvironmentCaches } from './preview-environment-caches.js';
import type { EnvironmentMemory } from './preview-environment-memory.js';
import type { RenderedEnvironment } from './preview-environment-rendering.js';
import type { EnvironmentObject, Failure } from './preview-environment-status.js';

export const environmentLabel = ownershipLabelKeys.environment;

/** The namespace's guards, pruned with the rest though no repository may render them. */
const guardKinds: GroupKind[] = [
  { group: '', kind: 'ResourceQuota' },
  { group: '', kind: 'LimitRange' },
  { group: 'networking.k8s.io', kind: 'NetworkPolicy' },
];

/** Versions of the kinds the default allow-list names; other groups' preferred version comes from discovery. */
const knownVersions: Record<string, string> = {
  '': 'v1',
  apps: 'apps/v1',
  batch: 'batch/v1',
  autoscaling: 'autoscaling/v2',
  policy: 'policy/v1',
  'networking.k8s.io': 'networking.k8s.io/v1',
  'rbac.authorization.k8s.io': 'rbac.authorization.k8s.io/v1',
  'ai.alien6.io': 'ai.alien6.io/v1',
  'mycompany.com': 'mycompany.com/v1',
  'cert-manager.io': 'cert-manager.io/v1',
};

/** How long a rendering the API server refused is not dry-run again (a refusal may depend on the cluster: a quota, an account). */
const refusalRecheckMs = 60_000;

/** The namespace's guards as the operator renders them (render-preview.ts): those kinds, and the `default` ServiceAccount. */
function isGuard(obj: KubeObject): boolean {
  if (obj.apiVersion === 'v1' && obj.kind === 'ServiceAccount') return obj.metadata.name === 'default';
  return guardKinds.some((g) => g.kind === obj.kind && g.group === groupOf(obj.apiVersion));
}

/**
 * The guards the repository cannot shape: the LimitRange, the NetworkPolicy and the `default`
 * ServiceAccount come from the operator's settings alone; the ResourceQuota is sized by the
 * repository's preview.yaml (`resources`), so it is dry-run with the repository's objects.
 */
function settledGuards(rendered: RenderedEnvironment): Set<KubeObject> {
  return new Set([...rendered.guards].filter((guard) => !(guard.kind === 'ResourceQuota' && groupOf(guard.apiVersion) === '')));
}

/** The ownership label of everything an environment applies, which prune looks for. */
export function ownershipOf(name: string): Ownership {
  return { label: environmentLabel, value: name };
}

export interface RenderingApplierDependencies {
  client: ObjectClient;
  caches: EnvironmentCaches;
  memory: EnvironmentMemory;
  allowedKinds: AllowedKinds;
  clock: Clock;
  logger: Logger;
}

export class RenderingApplier {
  private readonly applier: Applier;
  private readonly preferredVersions = new Map<string, string>();

  constructor(private readonly deps: RenderingApplierDependencies) {
    this.applier = new Applier(deps.client, { lookup: (ref) => deps.caches.lookup(ref), seen: (ref) => deps.caches.seen(ref) });
  }

  /**
   * The namespace and the rendering: a new one all or nothing, through a dry run of the whole set
   * before its first write. A refusal by the API server is returned; what served before keeps
   * serving, its namespace's annotations included.
   */
  async apply(env: EnvironmentObject, rendered: RenderedEnvironment, liveNamespace: KubeObject | undefined): Promise<Failure | undefined> {
    const name = env.metadata.name;
    const remembered = this.deps.memory.of(name);
    const key = remembered.render?.key ?? '';
    const ownership = ownershipOf(name);
    const namespace = ownedNamespace(env, rendered);
    try {
      // A namespace to create comes first: the operator's own object, and nothing can be dry-run in it before.
      const [created] = liveNamespace ? [] : await this.applier.apply([namespace], { ownership });
      // In a namespace created just now nothing can exist yet: no read before each apply.
      const fresh = created?.action === 'created';
      const checked = remembered.applied?.key === key ? undefined : await this.dryRun(env, key, rendered, fresh);
      if (checked && 'refused' in checked) return checked.refused;
      // What the dry run did not judge may still be refused: the objects that apply created go again. The guards
      // go first, on their own: one refused stops before any object of the repository's, those of its kind included.
      const options = { ownership, fresh, live: checked?.live, undoCreated: true };
      const guards = rendered.objects.filter((o) => rendered.guards.has(o));
      const repositoryObjects = rendered.objects.filter((o) => !rendered.guards.has(o));
      await this.applier.apply(guards, options);
      if (liveNamespace) await this.applier.apply([namespace], { ownership });
      await this.applier.apply(repositoryObjects, options);
      remembered.applied = { key, namespace, objects: rendered.objects };
      remembered.refusal = undefined;
      return undefined;
    } catch (err) {
      const rejected = describeRejection(err);
      if (!rejected) throw err;
      // Refused at a real write (what the dry run could not judge): what it created is gone again,
      // and like a dry run's refusal it is not tried again before `refusalRecheckMs`.
      const undone = `${rendered.sha.slice(0, 12)} is not applied (what it created was deleted again)`;
      const failure = { ...rejected, message: `${rejected.message}; ${undone}` };
      remembered.refusal = { key, failure, at: this.deps.clock.now() };
      return failure;
    }
  }

  /**
   * The server-side dry run of a new rendering: every object it would write, at once (extra
   * requests: one dry-run apply per object written), but the guards the repository cannot shape.
   * Those the operator renders from its own settings alone, and applies before anything else: one
   * refused at its real write stops the apply before any object of the repository's, and the guards
   * it created are deleted again — so they are not judged twice (3 of a first deploy's 6 dry runs).
   * A refusal is kept for its render key and reused for `refusalRecheckMs`, so the events of what
   * still serves do not dry-run it again.
   */
  private async dryRun(
    env: EnvironmentObject,
    key: string,
    rendered: RenderedEnvironment,
    fresh: boolean,
  ): Promise<{ live: LiveObjects } | { refused: Failure }> {
    const remembered = this.deps.memory.of(env.metadata.name);
    const known = remembered.refusal;
    if (known?.key === key && this.deps.clock.now() - known.at < refusalRecheckMs) return { refused: known.failure };
    try {
      const ownership = ownershipOf(env.metadata.name);
      return { live: await this.applier.dryRunWrites(rendered.objects, { ownership, fresh, unjudged: settledGuards(rendered) }) };
    } catch (err) {
      const rejected = describeRejection(err);
      if (!rejected) throw err;
      const serving = env.status?.deployedSha ? `; ${env.status.deployedSha.slice(0, 12)} keeps serving` : '';
      const failure = { ...rejected, message: `${rejected.message}; nothing of ${rendered.sha.slice(0, 12)} was applied${serving}` };
      remembered.refusal = { key, failure, at: this.deps.clock.now() };
      return { refused: failure };
    }
  }

  /** Deletes what left the rendering, once per rendering (a namespace created just now holds nothing to prune). */
  async prune(name: string, rendered: RenderedEnvironment, namespaceIsNew: boolean): Promise<void> {
    const remembered = this.deps.memory.of(name);
    const renderKey = remembered.render?.key ?? '';
    if (namespaceIsNew) remembered.prunedKey = renderKey;
    if (remembered.prunedKey === renderKey) return;
    const deleted = await this.applier.prune({
      ownership: ownershipOf(name),
      keep: rendered.objects,
      kinds: await this.pruneKinds(),
      namespaces: [name],
    });
    if (deleted.length > 0) {
      this.deps.logger.info(
        { environment: name, deleted: deleted.map((r) => `${r.kind}/${r.name}`) },
        'pruned objects that left the rendering',
      );
    }
    remembered.prunedKey = renderKey;
  }

  /**
   * Remembers the guards of what serves, from the deployed commit's rendering, where this process
   * has applied nothing yet (after a restart, while the head is refused): `repairGuards` then has
   * something to put back. Its key matches no render key, so the next apply is dry-run as usual.
   */
  rememberServed(env: EnvironmentObject, rendered: RenderedEnvironment): void {
    const remembered = this.deps.memory.of(env.metadata.name);
    if (remembered.applied) return;
    const namespace = ownedNamespace(env, rendered);
    remembered.applied = { key: `served/${rendered.sha}`, namespace, objects: rendered.objects.filter((o) => rendered.guards.has(o)) };
  }

  /**
   * Puts the Namespace (its labels and annotations: Pod Security, ownership) and its guards back
   * as last applied where they drifted (the cache tells, so this reads nothing while they are
   * intact; a Namespace that lost its label is read, unless the process caches every namespace). Only in a namespace this environment
   * controls, and only once this process applied a rendering to it or learnt what serves (`rememberServed`).
   */
  async repairGuards(env: EnvironmentObject): Promise<void> {
    const name = env.metadata.name;
    const applied = this.deps.memory.peek(name)?.applied;
    const namespace = applied && (await this.deps.caches.namespace(name));
    if (!applied || !namespace || namespace.metadata.deletionTimestamp || !isControlledBy(namespace, env)) return;
    const guards = [applied.namespace, ...applied.objects.filter((o) => isGuard(o))];
    const results = await this.applier.apply(guards, { ownership: ownershipOf(name) });
    const repaired = results.filter((r) => r.action !== 'unchanged').map((r) => `${r.ref.kind}/${r.ref.name}`);
    if (repaired.length > 0) this.deps.logger.info({ environment: name, repaired }, 'guards put back');
  }

  /**
   * The environment of a guard (NetworkPolicy, ResourceQuota, LimitRange, the default
   * ServiceAccount) that is no longer as last applied — deleted, edited, its label removed — so
   * that its reconcile puts it back. Our own writes, other ServiceAccounts, and guards of a
   * rendering not applied yet, wake nothing. (The Namespace wakes its owner through `owns`.)
   */
  drifted(informer: CacheReader, obj: KubeObject): string[] {
    const name = obj.metadata.labels?.[environmentLabel];
    const applied = name ? this.deps.memory.peek(name)?.applied : undefined;
    if (!name || !applied) return [];
    const ref = { ...refOf(obj), apiVersion: informer.kind.apiVersion, kind: informer.kind.kind };
    const desired = applied.objects.find((o) => identityOf(o) === identityOf(ref));
    if (!desired || !isGuard(desired)) return [];
    const live = informer.get(`${ref.namespace}/${ref.name}`);
    return live && this.applier.isApplied({ ...live, ...informer.kind }, desired, ownershipOf(name)) ? [] : [name];
  }

  /**
   * An object of the rendering as the cluster last showed it: the cache's copy, or the API server's
   * answer to our apply while the cache has not caught up (readiness right after an apply: an
   * Ingress just created exists, though its watch event has not come yet).
   */
  live(ref: ObjectRef): KubeObject | undefined {
    const known = this.applier.known(ref);
    return known === 'absent' ? undefined : known;
  }

  /** The kinds prune looks at: every allowed kind and the guards, those the cluster serves. */
  private async pruneKinds(): Promise<KindRef[]> {
    const kinds = await Promise.all(
      [...this.deps.allowedKinds.kinds, ...guardKinds].map(async (gk) => {
        const apiVersion = await this.preferredVersion(gk.group);
        if (!apiVersion) return undefined;
        const kind = { apiVersion, kind: gk.kind };
        return (await this.deps.client.discovery.has(kind)) ? kind : undefined;
      }),
    );
    return kinds.filter((k): k is KindRef => k !== undefined);
  }

  private async preferredVersion(group: string): Promise<string | undefined> {
    const known = knownVersions[group] ?? this.preferredVersions.get(group);
    if (known) return known;
    try {
      const doc = await this.deps.client.request<{ preferredVersion?: { groupVersion?: string } }>({ path: `/apis/${group}` });
      const version = doc?.preferredVersion?.groupVersion;
      if (version) this.preferredVersions.set(group, version);
      return version;
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }
}

/** Rejections by the API server that the rendering caused (a user can fix them), or undefined. */
function describeRejection(err: unknown): Failure | undefined {
  if (err instanceof InvalidError) {
    // The comment's lines name the object: the causes alone say only which field.
    const details = err.status?.details;
    const object = details?.kind && details.name ? `${details.kind} ${details.name}: ` : '';
    const causes = err.causes.map((c) => `${object}${c.field ? `${c.field}: ` : ''}${c.message ?? c.reason ?? ''}`);
    return {
      kind: 'ApplyRejected',
      message: `the API server rejected an object: ${err.message}`,
      details: causes.length > 0 ? causes : [err.message],
    };
  }
  if (err instanceof ForbiddenError) {
    return { kind: 'ApplyRejected', message: `the API server refused an object: ${err.message}`, details: [err.message] };
  }
  if (err instanceof NoKindMatchError) return { kind: 'ApplyRejected', message: err.message, details: [err.message] };
  return undefined;
}

/** The rendering's Namespace, controlled by its environment (the owner reference the apply gives it). */
function ownedNamespace(env: EnvironmentObject, rendered: RenderedEnvironment): RenderedEnvironment['namespace'] {
  return { ...rendered.namespace, metadata: { ...rendered.namespace.metadata, ownerReferences: [controllerReference(env)] } };
}
