// Status is written through the status subresource, as a merge patch of exactly what
// changed, and not at all when nothing did: an idle reconcile makes no write.
import type { ObjectClient } from './object-client.js';
import { createMergePatch } from './json-merge-patch.js';
import { refOf, type KubeObject } from './kube-object.js';

export interface StatusUpdate<T extends KubeObject> {
  /** The object after the write (or the object passed in, unchanged). */
  object: T;
  /** Whether a write was sent. */
  written: boolean;
}

/**
 * Makes `obj`'s status equal to `status` (the complete desired status: members it lacks
 * are removed). Compares against `obj.status` — pass the freshest copy you have (the
 * informer's) — and patches the status subresource only if they differ.
 */
export async function updateStatus<T extends KubeObject>(
  client: ObjectClient,
  obj: T,
  status: NonNullable<T['status']>,
  options: { dryRun?: boolean } = {},
): Promise<StatusUpdate<T>> {
  const patch = createMergePatch(obj.status ?? {}, status);
  if (patch === undefined) return { object: obj, written: false };
  const info = await client.resolve(obj);
  if (!info.subresources.includes('status')) {
    throw new Error(`${obj.kind} has no status subresource: enable it in the CRD (subresources.status)`);
  }
  const object = await client.patch<T>(refOf(obj), 'merge', { status: patch }, { subresource: 'status', dryRun: options.dryRun });
  return { object, written: true };
}
