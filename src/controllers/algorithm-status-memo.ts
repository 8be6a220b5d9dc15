// The Algorithm's status carries the rollout's state (which image is stable, the canary's
// analysis counters). A reconcile that runs before the informer has seen our last status
// write would decide from the state before it — e.g. start again a canary it just promoted.
// So the reconciler remembers what the API server answered to its own writes and uses it
// until the informer's copy is at least as new.
import type { AlgorithmResource } from '../../constructs/index.js';

export class AlgorithmStatusMemo {
  private readonly written = new Map<string, AlgorithmResource>();

  /** Remembers the object the API server returned for our write. */
  remember(key: string, object: AlgorithmResource): void {
    this.written.set(key, object);
  }

  forget(key: string): void {
    this.written.delete(key);
  }

  /** The informer's copy, unless our own last write is newer (same object, later resourceVersion). */
  freshest(key: string, cached: AlgorithmResource): AlgorithmResource {
    const mine = this.written.get(key);
    if (!mine) return cached;
    if (mine.metadata.uid !== cached.metadata.uid || !isNewer(mine.metadata.resourceVersion, cached.metadata.resourceVersion)) {
      this.written.delete(key);
      return cached;
    }
    return mine;
  }
}

/**
 * resourceVersions are opaque to clients in general; etcd-backed servers issue increasing
 * integers, which is all this relies on. Anything else is treated as "not newer", so the
 * informer's copy wins — the behaviour without the memo.
 */
function isNewer(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) > BigInt(b);
}
