// Read your own writes through an informer's cache. The cache learns of a write one watch event
// after the API server answered it: a reconcile that runs in between (woken by a sibling object's
// event) would see the state before its own write, and write it again or decide from old status.
// So the answer to our own write is kept and used until the cache has caught up with it — its
// copy is at least as new, or, when it has none, its watch has gone past the write (so the object
// was deleted since, and the cache is right).
//
// resourceVersions of objects of one type compare as integers (KEP-5504, stable in Kubernetes
// 1.35; the java-operator-sdk reads its own writes the same way). A version that is not an
// integer compares as "not newer", so the cache wins: the behaviour without this.
import type { KubeObject } from './kube-object.js';

/** Where the cache stands on one object: its copy (as `freshest` takes it) and its watch's position. */
export interface CacheStand<T extends KubeObject> {
  cached: T | 'absent' | undefined;
  seen?: string;
}

export interface OwnWritesOptions<T extends KubeObject> {
  /** An answer the cache has not caught up with after this long is dropped (a broken watch: the cache wins). @default 60_000 */
  keepMs?: number;
  /**
   * The cache's stand on a remembered object: with it, answers the cache has caught up with are
   * dropped within a second even if never asked for again (a burst's answers would otherwise be
   * held for `keepMs`).
   */
  cacheOf?: (object: T) => CacheStand<T>;
  /** How often held answers are checked against the cache (an unref'd timer, while any are held). @default 1000 */
  sweepMs?: number;
  /** @default Date.now */
  now?: () => number;
}

export class OwnWrites<T extends KubeObject = KubeObject> {
  private readonly written = new Map<string, { object: T; at: number }>();
  private readonly keepMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: OwnWritesOptions<T> = {}) {
    this.keepMs = options.keepMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Keeps the API server's answer to our write of the object `key`. */
  remember(key: string, object: T): void {
    this.written.set(key, { object, at: this.now() });
    this.scheduleSweep();
  }

  private scheduleSweep(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.sweep();
      if (this.written.size > 0) this.scheduleSweep();
    }, this.options.sweepMs ?? 1000).unref();
  }

  forget(key: string): void {
    this.written.delete(key);
  }

  /**
   * The fresher of the cache's answer and our last write of `key`. `cached`: the cache's copy,
   * `'absent'` when a synced cache has none, undefined when the cache cannot say (the caller reads
   * the API server). `seen`: the last resourceVersion the cache's watch delivered, which tells an
   * object it has not seen yet from one deleted since; without it, an absent copy wins.
   */
  freshest(key: string, cached: T): T;
  freshest(key: string, cached: T | 'absent' | undefined, seen?: string): T | 'absent' | undefined;
  freshest(key: string, cached: T | 'absent' | undefined, seen?: string): T | 'absent' | undefined {
    const mine = this.written.get(key);
    if (!mine) return cached;
    if (this.ahead(mine, { cached, seen }, this.now())) return mine.object;
    this.written.delete(key);
    return cached;
  }

  /** Drops the answers the cache has caught up with, and those held for `keepMs` (on a timer, while any are held). */
  sweep(): void {
    const now = this.now();
    const { cacheOf } = this.options;
    for (const [key, mine] of this.written) {
      const expired = now - mine.at > this.keepMs;
      if (expired || (cacheOf && !this.ahead(mine, cacheOf(mine.object), now))) this.written.delete(key);
    }
  }

  /** Our answer is still newer than what the cache holds, and not too old to trust. */
  private ahead(mine: { object: T; at: number }, { cached, seen }: CacheStand<T>, now: number): boolean {
    const theirs = cached === 'absent' ? seen : cached?.metadata.resourceVersion;
    return now - mine.at <= this.keepMs && isNewerResourceVersion(mine.object.metadata.resourceVersion, theirs);
  }
}

/** True if resourceVersion `a` is later than `b` (both etcd's integers; anything else: false). */
export function isNewerResourceVersion(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) > BigInt(b);
}
