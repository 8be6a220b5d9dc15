// An environment only moves forward in time. Every description of a pull request GitHub gives
// (a delivery, a listing) carries its `updated_at`; the environment records the one it was
// written from (`spec.pullRequest.updatedAt`), and a description older than that is stale: a
// captured delivery replayed under a new X-GitHub-Delivery id (the signature covers the body
// only, so deduplication by id cannot stop it), a delivery GitHub sent late, or a listing read
// before a newer delivery landed. The API server enforces it for every write (a CEL transition
// rule on the CRD); the store checks it before a delete; the receiver answers `stale` at once,
// from what the cluster records (the informer's cache) and from what this process accepted.
//
// Equal times are not stale: GitHub counts in seconds, so two real updates (a push and a label,
// two pushes) can share one; refusing the second would keep the first until the next update, and
// the resync — whose listing carries that same time — could not repair it. A replay can then
// only choose between states GitHub itself reported within one second.
import { systemClock, type Clock } from '../kube/clock.js';
import type { KubeObject } from '../kube/kube-object.js';

/** The pull request update an environment object records, if any. */
export function recordedUpdate(object: KubeObject | undefined): string | undefined {
  const value = (object as { spec?: { pullRequest?: { updatedAt?: unknown } } } | undefined)?.spec?.pullRequest?.updatedAt;
  return typeof value === 'string' ? value : undefined;
}

/** True when `update` is strictly older than `recorded`; a time that is absent or unreadable is never older. */
export function isOlder(update: string | undefined, recorded: string | undefined): boolean {
  if (update === undefined || recorded === undefined) return false;
  const [u, r] = [Date.parse(update), Date.parse(recorded)];
  return !Number.isNaN(u) && !Number.isNaN(r) && u < r;
}

/** The newer of two times (either may be absent). */
export function newer(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  return b !== undefined && isOlder(a, b) ? b : a;
}

export interface UpdateMemoryOptions {
  /** How long an environment's newest update is remembered after it was accepted (default 24 h). */
  windowMs?: number;
  /** At most this many environments; the least recently accepted are forgotten first (default 10,000). */
  maxEntries?: number;
  clock?: Clock;
}

/**
 * The newest update this process accepted per environment, deletions included: it answers a
 * replay before the cache has seen the write it follows, and after the environment is gone (a
 * replayed `opened` after the `closed` that deleted it). Bounded, oldest forgotten first; the
 * API server's rule does not depend on it. With it, the head SHA of the last upsert accepted:
 * the commit an untrusted pull request's approval was tied to, known before the cache has the
 * environment and after a draft or a close deleted it (trust.ts, `approvalHolds`).
 */
export class UpdateMemory {
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly clock: Clock;
  /** name → newest update and when it was accepted; a Map iterates in insertion order. */
  private readonly accepted = new Map<string, { update?: string; upsertedHead?: string; at: number }>();

  constructor(options: UpdateMemoryOptions = {}) {
    this.windowMs = options.windowMs ?? 24 * 3_600_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? systemClock;
    if (!(this.windowMs > 0) || !(this.maxEntries >= 1)) throw new RangeError('windowMs and maxEntries must be positive');
  }

  /**
   * Records that `name` was asked to move to `update` (keeps the newer of it and what was there);
   * `upsertedHead`: the head SHA an upsert deploys (kept until the next upsert's).
   */
  accept(name: string, update: string | undefined, upsertedHead?: string): void {
    if (update === undefined && upsertedHead === undefined) return;
    const now = this.clock.now();
    const previous = this.live(name);
    const kept = { update: newer(previous?.update, update), upsertedHead: upsertedHead ?? previous?.upsertedHead };
    this.accepted.delete(name);
    this.accepted.set(name, { ...kept, at: now });
    while (this.accepted.size > this.maxEntries) this.accepted.delete(this.accepted.keys().next().value as string);
    for (const [key, entry] of this.accepted) {
      if (now - entry.at < this.windowMs) break;
      this.accepted.delete(key);
    }
  }

  /** The newest update accepted for `name` within the window. */
  newest(name: string): string | undefined {
    return this.live(name)?.update;
  }

  /** The head SHA of the last upsert accepted for `name` within the window. */
  upsertedHead(name: string): string | undefined {
    return this.live(name)?.upsertedHead;
  }

  private live(name: string) {
    const entry = this.accepted.get(name);
    return entry && this.clock.now() - entry.at < this.windowMs ? entry : undefined;
  }
}
