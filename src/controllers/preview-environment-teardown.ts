// How an environment goes: deleted (the PR closed) or expired (its time to live ran out while the
// PR is open). Either way GitHub is told, and the namespace — only one this environment controls —
// is deleted and looked at until gone: its DELETED event wakes the environment, and a poll that
// backs off the longer the namespace takes covers an event missed.
//
// Deleted: report destroyed (or expired) → delete the namespace → wait until gone → drop the
// finalizer. A report GitHub keeps refusing does not hold the teardown up for ever.
// Expired: an expiry sticks, since the PR is still open and the GitHub side would recreate a
// deleted object: the object stays in phase Expired with status.expiredSha, and only a new head
// SHA (a push) deploys again, with a fresh TTL. Deleting an Expired environment (PR closed) just
// drops the finalizer once the namespace is gone; GitHub was already told it expired (the
// teardown report repeats 'expired', which the reporter's hashes make a no-op), never 'destroyed'.
import {
  ConflictError,
  NotFoundError,
  formatTime,
  hasFinalizer,
  isControlledBy,
  refOf,
  removeFinalizer,
  type Clock,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ReconcileContext,
  type ReconcileResult,
} from '../kube/index.js';
import type { EnvironmentCaches } from './preview-environment-caches.js';
import type { EnvironmentMemory } from './preview-environment-memory.js';
import type { Settings } from './preview-environment-options.js';
import {
  ReportFailed,
  expiredOutcome,
  readyMessage,
  teardownOutcome,
  type Current,
  type EnvironmentObject,
  type StatusWriter,
} from './preview-environment-status.js';

/** Held until the environment's namespace is gone and GitHub was told. */
export const previewEnvironmentFinalizer = 'preview.alien6.io/teardown';

/** The longest a namespace being deleted goes without a look of its own (its DELETED event usually comes first). */
export const maxNamespacePollMs = 30_000;

/**
 * Milliseconds until a namespace being deleted is looked at again: `pollMs` at first, then as long
 * as this process has seen it terminating, at most 30 s (or `pollMs`, if longer). Its DELETED event
 * wakes the environment anyway; the poll only covers an event missed, so it need not come every
 * 2 s while the namespace controller empties a namespace. The age is counted by our own clock
 * from our first sight, not from the API server's deletionTimestamp: clocks apart must not
 * stretch the first polls.
 */
export function namespacePollWait(memory: EnvironmentMemory, name: string, namespace: KubeObject, now: number, pollMs: number): number {
  const remembered = memory.of(name);
  const uid = namespace.metadata.uid ?? '';
  if (remembered.namespaceGoing?.uid !== uid) remembered.namespaceGoing = { uid, since: now };
  return Math.max(pollMs, Math.min(maxNamespacePollMs, now - remembered.namespaceGoing.since));
}

/** Phase Expired at the head SHA that expired: nothing to do until a new head SHA, or the deletion. */
export function isExpiredAtHead(env: EnvironmentObject): boolean {
  return env.status?.phase === 'Expired' && env.status.expiredSha === env.spec.pullRequest.headSha;
}

export interface TeardownDependencies {
  client: ObjectClient;
  caches: EnvironmentCaches;
  memory: EnvironmentMemory;
  status: StatusWriter;
  settings: Pick<Settings, 'namespacePollMs' | 'maxTeardownReportAttempts'>;
  clock: Clock;
  logger: Logger;
}

export class EnvironmentTeardown {
  constructor(private readonly deps: TeardownDependencies) {}

  /** The PreviewEnvironment is being deleted: tell GitHub, delete the namespace, wait until it is gone, drop the finalizer. */
  async finalize(current: Current, ctx: ReconcileContext): Promise<ReconcileResult> {
    const name = current.env.metadata.name;
    if (!hasFinalizer(current.env, previewEnvironmentFinalizer)) return {};
    await this.reportGone(current, ctx);
    const poll = await this.deleteNamespace(current.env);
    if (poll !== undefined) return { requeueAfter: poll };
    // Free the slot before the object goes: until then its deletionTimestamp holds it.
    this.deps.memory.forget(name);
    await removeFinalizer(this.deps.client, current.env, previewEnvironmentFinalizer);
    return {};
  }

  /** The time to live ran out at `expiry`: Expired at this head SHA, and the namespace goes. */
  async expire(current: Current, ctx: ReconcileContext, expiry: Date, ttl: string): Promise<ReconcileResult> {
    const env = current.env;
    const since = env.status?.lastDeployedAt ?? env.metadata.creationTimestamp;
    const message =
      `expired at ${formatTime(expiry)}: no new commit was deployed within its time to live of ${ttl} ` + `(last deployment ${since})`;
    // From now on its namespace holds the slot, not this process's admission: the namespace's
    // going is what wakes the environments Queued behind it.
    this.deps.memory.slots.release(env.metadata.name);
    try {
      await this.deps.status.settle(current, ctx, expiredOutcome(message, env.spec.pullRequest.headSha));
    } finally {
      // Even when GitHub could not be told now (the next reconcile tells it again).
      await this.deleteNamespace(current.env);
    }
    return this.stayExpired(current, ctx);
  }

  /**
   * Phase Expired at the expired SHA: the namespace goes (polled until gone), then nothing
   * happens — no write — until a new head SHA or the deletion. A report that failed is retried.
   */
  async stayExpired(current: Current, ctx: ReconcileContext): Promise<ReconcileResult> {
    const env = current.env;
    if ((env.status?.retryCount ?? 0) > 0) await this.deps.status.settle(current, ctx, expiredOutcome(readyMessage(env)));
    const poll = await this.deleteNamespace(current.env);
    if (poll !== undefined) return { requeueAfter: poll };
    // Torn down: it holds no slot any more (a Queued sibling may start).
    this.deps.memory.forget(env.metadata.name);
    return {};
  }

  /** Tells GitHub the environment is gone; after `maxTeardownReportAttempts` failed reports, the teardown goes on without it. */
  private async reportGone(current: Current, ctx: ReconcileContext): Promise<void> {
    try {
      await this.deps.status.settle(current, ctx, teardownOutcome(current.env));
    } catch (err) {
      const attempts = this.deps.settings.maxTeardownReportAttempts;
      if (!(err instanceof ReportFailed) || ctx.retries + 1 < attempts) throw err;
      this.deps.logger.warn(
        { environment: current.env.metadata.name, attempts, err: err.message },
        'teardown: GitHub could not be told; going on without it',
      );
    }
  }

  /** Deletes the environment's namespace (only if it controls it); while it still exists, the wait until the next look. */
  private async deleteNamespace(env: EnvironmentObject): Promise<number | undefined> {
    const name = env.metadata.name;
    const namespace = await this.deps.caches.namespace(name);
    if (!namespace || !isControlledBy(namespace, env)) return undefined;
    if (!namespace.metadata.deletionTimestamp && !this.deletedBefore(name, namespace)) {
      await this.deps.client.delete(refOf(namespace), { preconditions: { uid: namespace.metadata.uid } }).catch((err) => {
        // Gone, or replaced by another (409, its uid): looked at again.
        if (!(err instanceof NotFoundError) && !(err instanceof ConflictError)) throw err;
      });
      this.deps.logger.info({ environment: name }, 'teardown: namespace deleted');
    }
    return namespacePollWait(this.deps.memory, name, namespace, this.deps.clock.now(), this.deps.settings.namespacePollMs);
  }

  /**
   * Whether this process already deleted (or saw going) this very namespace: a reconcile woken before
   * the cache has seen our delete would otherwise send it again, which the API server accepts as a
   * no-op — a write for nothing.
   */
  private deletedBefore(name: string, namespace: KubeObject): boolean {
    const going = this.deps.memory.peek(name)?.namespaceGoing;
    return going !== undefined && going.uid === namespace.metadata.uid;
  }
}
