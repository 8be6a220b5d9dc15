// Whether an object read earlier has been deleted since: a reconcile that meets 404 halfway
// (its object, or the namespace around it, torn down under it) has nothing left to converge or
// report. A 404 alone does not say so: a status subresource the server stopped serving, or a kind
// it no longer serves, answers 404 as well — so the object itself is read.
import type { ObjectClient } from './object-client.js';
import { NotFoundError } from './errors.js';
import { refOf, type KubeObject } from './kube-object.js';

/** The object no longer exists, or exists as another one (deleted and created again). */
export async function isDeleted(client: ObjectClient, obj: KubeObject): Promise<boolean> {
  try {
    return (await client.get(refOf(obj))).metadata.uid !== obj.metadata.uid;
  } catch (err) {
    if (err instanceof NotFoundError) return true;
    throw err;
  }
}
