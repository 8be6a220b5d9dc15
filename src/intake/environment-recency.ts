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
import { repositoryKey, type RepositoryName } from '../github/octokit-factory.js';
import { systemClock, type Clock } from '../kube/clock.js';
import type { KubeObject } from '../kube/kube-object.js';
import type { ApprovedAt } from '../policy/trust.js';

/** The pull request update an environment object records, if any. */
export function recordedUpdate(object: KubeObject | undefined): string | undefined {
  const value = (object as { spec?: { pullRequest?: { updatedAt?: unknown } } } | undefined)?.spec?.pullRequest?.updatedAt;
  return typeof value === 'string' ? value : undefined;
}

/** Whether an environment object records `repository`: two repositories may map to one environment name. */
export function recordsRepository(object: KubeObject | undefined, repository: RepositoryName): boolean {
  const recorded = (object as { spec?: { repository?: { owner?: unknown; name?: unknown } } } | undefined)?.spec?.repository;
  const { owner, name } = recorded ?? {};
  return typeof owner === 'string' && typeof name === 'string' && repositoryKey({ owner, name }) === repositoryKey(repository);
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

/** The head an untrusted pull request's approval was given at, and the repository it is of. */
interface Approval extends ApprovedAt {
  /** `owner/name`, lower-cased: two repositories may map to one environment name. */
  repository: string;
}

/**
 * The newest update this process accepted per environment, deletions included: it answers a
 * replay before the cache has seen the write it follows, and after the environment is gone (a
 * replayed `opened` after the `closed` that deleted it). Bounded, oldest forgotten first; the
 * API server's rule does not depend on it. With it, the head SHA an untrusted pull request's
 * approval was given at (trust.ts, `approvalHolds`): known before the cache has the environment,
 * and while none exists (a draft, a closed pull request).
 */
export class UpdateMemory {
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly clock: Clock;
  /** name → newest update, approval, and when either was recorded; a Map iterates in insertion order. */
  private readonly accepted = new Map<string, { update?: string; approval?: Approval; at: number }>();

  constructor(options: UpdateMemoryOptions = {}) {
    this.windowMs = options.windowMs ?? 24 * 3_600_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? systemClock;
    if (!(this.windowMs > 0) || !(this.maxEntries >= 1)) throw new RangeError('windowMs and maxEntries must be positive');
  }

  /** Records that `name` was asked to move to `update` (keeps the newer of it and what was there). */
  accept(name: string, update: string | undefined): void {
    if (update === undefined) return;
    const previous = this.live(name);
    this.record(name, { ...previous, update: newer(previous?.update, update) });
  }

  /** Records that the approval of `repository`'s pull request behind `name` holds at `at` (its head and base). */
  approve(name: string, repository: RepositoryName, at: ApprovedAt): void {
    this.record(name, { ...this.live(name), approval: { ...at, repository: repositoryKey(repository) } });
  }

  /** Forgets the approval of `name`: it was taken away (a push, a new base, the label removed). */
  revoke(name: string): void {
    const live = this.live(name);
    if (live?.approval) this.record(name, { update: live.update });
  }

  /** The newest update accepted for `name` within the window. */
  newest(name: string): string | undefined {
    return this.live(name)?.update;
  }

  /** Where (head SHA, base branch) the approval of `repository`'s pull request behind `name` holds, if recorded within the window. */
  approvedAt(name: string, repository: RepositoryName): ApprovedAt | undefined {
    const approval = this.live(name)?.approval;
    return approval?.repository === repositoryKey(repository) ? { headSha: approval.headSha, baseRef: approval.baseRef } : undefined;
  }

  private record(name: string, entry: { update?: string; approval?: Approval }): void {
    const now = this.clock.now();
    this.accepted.delete(name);
    this.accepted.set(name, { ...entry, at: now });
    while (this.accepted.size > this.maxEntries) this.accepted.delete(this.accepted.keys().next().value as string);
    for (const [key, value] of this.accepted) {
      if (now - value.at < this.windowMs) break;
      this.accepted.delete(key);
    }
  }

  private live(name: string) {
    const entry = this.accepted.get(name);
    return entry && this.clock.now() - entry.at < this.windowMs ? entry : undefined;
  }
}
