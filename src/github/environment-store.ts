// Where the GitHub side records desired state: PreviewEnvironment objects. One write per
// call — a server-side apply of the spec, or a delete — so a webhook answers as fast as the
// API server takes one request.
import type { KubeClient } from '../kube/client.js';
import { NotFoundError } from '../kube/errors.js';
import type { KubeObject } from '../kube/kube-object.js';
import { previewEnvironmentApiVersion, type PreviewEnvironmentSpec } from '../../constructs/api-types.js';

export const previewEnvironmentKind = { apiVersion: previewEnvironmentApiVersion, kind: 'PreviewEnvironment' } as const;

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

export interface EnvironmentStore {
  /** Creates or updates the environment's spec (the fields this operator owns; others' fields stay). */
  upsert(name: string, spec: PreviewEnvironmentSpec, options?: UpsertOptions): Promise<void>;
  /** Deletes the environment; `absent` when there was none. */
  delete(name: string): Promise<'deleted' | 'absent'>;
}

/** The PreviewEnvironment object this operator applies for `spec`. */
export function environmentObject(name: string, spec: PreviewEnvironmentSpec, options: UpsertOptions & {
  /** Finalizers the object carries from its first write (see `KubeEnvironmentStoreOptions`). */
  finalizers?: readonly string[];
} = {}): KubeObject {
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
  constructor(private readonly client: KubeClient, private readonly options: KubeEnvironmentStoreOptions = {}) {}

  async upsert(name: string, spec: PreviewEnvironmentSpec, options?: UpsertOptions): Promise<void> {
    await this.client.apply(environmentObject(name, spec, { finalizers: this.options.finalizers, ...options }));
  }

  async delete(name: string): Promise<'deleted' | 'absent'> {
    try {
      await this.client.delete({ ...previewEnvironmentKind, name });
      return 'deleted';
    } catch (err) {
      if (err instanceof NotFoundError) return 'absent';
      throw err;
    }
  }
}
