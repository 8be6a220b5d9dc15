// Finalizers are edited with the object's resourceVersion in the patch, so a concurrent
// writer's change is never overwritten: on a conflict we re-read and try again.
import type { ObjectClient } from './object-client.js';
import { ConflictError, NotFoundError } from './errors.js';
import { refOf, type KubeObject } from './kube-object.js';

const maxAttempts = 10;

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Adds `finalizer` (no write if present). Returns the object as written, or as given when nothing changed. */
export async function addFinalizer<T extends KubeObject>(client: ObjectClient, obj: T, finalizer: string): Promise<T> {
  const result = await editFinalizers(client, obj, (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]));
  if (!result) throw new NotFoundError(`${obj.kind} ${obj.metadata.name} is gone`, 404, 'NotFound');
  return result;
}

/**
 * Removes `finalizer` (no write if absent). Returns the object as written, or undefined
 * if the object no longer exists (removing its last finalizer may delete it).
 */
export async function removeFinalizer<T extends KubeObject>(client: ObjectClient, obj: T, finalizer: string): Promise<T | undefined> {
  return editFinalizers(client, obj, (list) => (list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined));
}

/** `edit` returns the new list, or undefined for "no change". */
async function editFinalizers<T extends KubeObject>(
  client: ObjectClient,
  obj: T,
  edit: (finalizers: string[]) => string[] | undefined,
): Promise<T | undefined> {
  let current: T = obj;
  for (let attempt = 1; ; attempt++) {
    const next = edit(current.metadata.finalizers ?? []);
    if (!next) return current;
    try {
      // resourceVersion in a merge patch makes the server reject it (409) if the object changed meanwhile.
      return await client.patch<T>(refOf(current), 'merge', {
        metadata: { finalizers: next.length ? next : null, resourceVersion: current.metadata.resourceVersion },
      });
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      if (!(err instanceof ConflictError) || attempt >= maxAttempts) throw err;
    }
    try {
      current = await client.get<T>(refOf(current));
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }
}
