// Where the GitHub side records desired state: PreviewEnvironment objects. One write per
// call — a server-side apply of the spec, or a delete — so a webhook answers as fast as the
// API server takes one request.
import type { KubeClient } from '../kube/client.js';
import { ConflictError, InvalidError, NotFoundError, TransientError } from '../kube/errors.js';
import type { KubeObject } from '../kube/kube-object.js';
import { previewEnvironmentKind, type PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { isOlder, recordedUpdate, recordsRepository } from './environment-recency.js';

export { previewEnvironmentKind };

export const environmentLabelKeys = {
  managedBy: 'app.kubernetes.io/managed-by',
  pullRequest: 'preview.alien6.io/pull-request',
} as const;

export const environmentAnnotationKeys = {
  /** `owner/name`: too long and free-form for a label value. */
  repository: 'preview.alien6.io/repository',
  /**
   * When the webhook delivery behind the last write arrived (ISO 8601, ms). The controller
   * times webhook → applied and webhook → ready from it; the resync never sets it.
   */
  deliveredAt: 'preview.alien6.io/delivered-at',
} as const;

export interface UpsertOptions {
  /** The arrival of the webhook delivery this write records. */
  deliveredAt?: Date;
}

export interface DeleteOptions {
  /** The pull request update that asks for the deletion: none is made when the environment records a newer one. */
  updatedAt?: string;
  /**
   * The repository whose pull request asks: an environment another repository's pull request
   * holds under the same name (two repositories whose names shorten and hash alike) is not its
   * to delete, and counts as `absent`.
   */
  repository?: { owner: string; name: string };
}

/** The message of the CRD's rule that refuses to move `spec.pullRequest.updatedAt` back (see the CRD). */
export const backInTimeMessage = 'spec.pullRequest.updatedAt cannot move back in time';

export interface EnvironmentStore {
  /**
   * Creates or updates the environment's spec (the fields this operator owns; others' fields stay);
   * `stale` when the environment records a newer pull request update than `spec` (nothing written).
   */
  upsert(name: string, spec: PreviewEnvironmentSpec, options?: UpsertOptions): Promise<void | 'stale'>;
  /**
   * Deletes the environment; `absent` when there was none (or only another repository's), `stale`
   * when it records a newer update than `options.updatedAt`.
   */
  delete(name: string, options?: DeleteOptions): Promise<'deleted' | 'absent' | 'stale'>;
}

/** The PreviewEnvironment object this operator applies for `spec`. */
export function environmentObject(
  name: string,
  spec: PreviewEnvironmentSpec,
  options: UpsertOptions & {
    /** Finalizers the object carries from its first write (see `KubeEnvironmentStoreOptions`). */
    finalizers?: readonly string[];
  } = {},
): KubeObject {
  return {
    ...previewEnvironmentKind,
    metadata: {
      name,
      labels: {
        [environmentLabelKeys.managedBy]: 'preview-operator',
        [environmentLabelKeys.pullRequest]: String(spec.pullRequest.number),
      },
      annotations: {
        [environmentAnnotationKeys.repository]: `${spec.repository.owner}/${spec.repository.name}`,
        ...(options.deliveredAt ? { [environmentAnnotationKeys.deliveredAt]: options.deliveredAt.toISOString() } : {}),
      },
      ...(options.finalizers?.length ? { finalizers: [...options.finalizers] } : {}),
    },
    spec,
  };
}

export interface KubeEnvironmentStoreOptions {
  /**
   * Finalizers every written object carries: the PreviewEnvironment controller's, when it runs
   * against this cluster, so a new environment's first reconcile starts rendering at once
   * instead of writing its finalizer first. Leave empty where no controller would remove it
   * (the object could then never be deleted).
   */
  finalizers?: readonly string[];
}

/** The store on a cluster, through the runtime's client (its field manager is the apply's). */
export class KubeEnvironmentStore implements EnvironmentStore {
  constructor(
    private readonly client: KubeClient,
    private readonly options: KubeEnvironmentStoreOptions = {},
  ) {}

  /** One apply: the API server itself refuses an older update (the CRD's rule), atomically with the write. */
  async upsert(name: string, spec: PreviewEnvironmentSpec, options?: UpsertOptions): Promise<void | 'stale'> {
    try {
      await this.client.apply(environmentObject(name, spec, { finalizers: this.options.finalizers, ...options }));
    } catch (err) {
      if (err instanceof InvalidError && isBackInTime(err)) return 'stale';
      throw err;
    }
  }

  /**
   * A delete carries no spec for the rule to check: with an update, the object is read, compared,
   * and deleted only at the resourceVersion that was compared (a write in between — a newer
   * delivery, or the controller's status — makes it read and compare again).
   */
  async delete(name: string, options: DeleteOptions = {}): Promise<'deleted' | 'absent' | 'stale'> {
    const ref = { ...previewEnvironmentKind, name };
    try {
      if (options.updatedAt === undefined && options.repository === undefined) {
        await this.client.delete(ref);
        return 'deleted';
      }
      for (let attempt = 0; attempt < maxDeleteAttempts; attempt++) {
        const current = await this.client.get(ref);
        if (options.repository && !recordsRepository(current, options.repository)) return 'absent';
        if (isOlder(options.updatedAt, recordedUpdate(current))) return 'stale';
        try {
          await this.client.delete(ref, { preconditions: { resourceVersion: current.metadata.resourceVersion } });
          return 'deleted';
        } catch (err) {
          if (!(err instanceof ConflictError)) throw err;
        }
      }
      const message = `PreviewEnvironment ${name} changed during each of ${maxDeleteAttempts} attempts to delete it`;
      throw new TransientError(message, 409, 'Conflict');
    } catch (err) {
      if (err instanceof NotFoundError) return 'absent';
      throw err;
    }
  }
}

/** The field manager of `spec.rerunRequestedAt`: not the applies' own, so their next write leaves the field be. */
export const rerunFieldManager = 'preview-operator-rerun';

/**
 * Asks the environment to deploy its head commit again (`spec.rerunRequestedAt`: a new value moves
 * its generation). A merge patch: it creates nothing, and a deleted environment stays deleted (`absent`).
 */
export async function requestRerun(client: KubeClient, name: string, requestedAt: string): Promise<'requested' | 'absent'> {
  const patch = { spec: { rerunRequestedAt: requestedAt } };
  try {
    await client.patch({ ...previewEnvironmentKind, name }, 'merge', patch, { fieldManager: rerunFieldManager });
    return 'requested';
  } catch (err) {
    if (err instanceof NotFoundError) return 'absent';
    throw err;
  }
}

/** Reads and conditional deletes before the writer's own backoff takes over (status writes can race a few). */
const maxDeleteAttempts = 5;

/** The API server's refusal by the CRD's rule (its message, in the Status or one of its causes). */
function isBackInTime(err: InvalidError): boolean {
  return [err.message, ...err.causes.map((c) => c.message)].some((m) => m?.includes(backInTimeMessage));
}
