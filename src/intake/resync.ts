// The resync: GitHub does not redeliver a webhook that failed, so every interval the leader
// lists the open pull requests of every repository that has environments, is configured, or
// that a GitHub App's installations cover (resync-targets.ts),
// and repairs the difference with the same decision the webhook takes (`decide`).
//
// Reading is cheap: every GET is conditional (ETag), so an unchanged listing is a 304 that
// costs no rate limit, and an environment is written only when its spec differs from the
// cached object, so an unchanged world makes no write. Deleting is guarded: an environment
// is deleted only when the pass has (1) a complete listing of its repository without it, or
// a listed pull request the decision removes, and (2) for a pull request missing from the
// listing, its own GET saying closed (or 404); never after a listing error, an incomplete
// pagination or a rate limit anywhere in the pass; and at most `maxDeletionsPerPass` per pass.
//
// Writes go through the webhook's EnvironmentWriter, stamped with the time the repository's
// listing was read: a delivery that arrived after it (the listing is already older) wins, and
// a delivery's write still waiting for a retry loses to the newer listing. Either way the
// newest state of the pull request is what stays, not whichever write happened to come last.
// Deliveries another replica accepted are seen in the cluster: an environment whose last
// webhook write (its delivered-at annotation) is newer than the listing is left alone. A
// delivery that other replica is still writing can race the pass; the next pass repairs it, as
// it repairs what clock skew between replicas (the annotation is the receiver's time, the
// listing's the leader's) or a pull request closed after its delivery during the pass misjudges.
// Whatever the timing, a listing never moves an environment back: every write carries the pull
// request's `updated_at` from the listing (or its GET), and the store refuses one older than what
// the environment records (`stale`, see environment-recency.ts) — a listing served from an old
// cache, or read before a delivery that landed first, changes nothing.
// Resync writes queue behind the webhook's in the writer, so in a burst a pass takes longer.
import { silentLogger, type Logger } from '../kube/logger.js';
import type { Runnable } from '../kube/manager.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import type { GitHubClients } from '../github/octokit-factory.js';
import type { EnvironmentWriter } from './environment-writer.js';
import type { PullRequestFactsOptions } from './pull-request-payload.js';
import { ResyncPass } from './resync-pass.js';
import type { ResyncSummary } from './resync-summary.js';
import { resyncTargets, type EnvironmentCache } from './resync-targets.js';

export type { ResyncError, ResyncSummary } from './resync-summary.js';
export type { EnvironmentCache } from './resync-targets.js';

export interface ResyncOptions {
  clients: GitHubClients;
  /** Where the writes go: the webhook's writer, so the two are ordered (see above). */
  writer: Pick<EnvironmentWriter, 'write'>;
  environments: EnvironmentCache;
  policy: () => PolicyConfig;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** Deletions per pass; the rest wait for the next pass and the cap is reported (default 10). */
  maxDeletionsPerPass?: number;
  /** Repositories read at the same time (default 4; GitHub allows 100 concurrent requests per credential). */
  concurrency?: number;
  logger?: Logger;
}

/** One resync pass. Never throws for GitHub or cluster errors: they are in the summary. */
export async function resyncOnce(options: ResyncOptions): Promise<ResyncSummary> {
  const pass = new ResyncPass(options);
  await pass.readRepositories(resyncTargets(options.environments, pass.config, await pass.visibleRepositories()));
  // Only once every repository is read: a rate limit anywhere holds back every deletion.
  await pass.deleteQueued();
  return pass.finish();
}

export interface ResyncRunnableOptions extends ResyncOptions {
  /** Between the end of one pass and the start of the next (default 5 minutes). */
  intervalMs?: number;
  /**
   * After the first pass of a leadership, the second comes this soon (default 30 s, at most the
   * interval): deliveries accepted around a hand-over — by a replica that died with its writes
   * queued, or while the API server came back — are repaired within seconds, not an interval.
   */
  followUpMs?: number;
  /** Told about every pass: metrics, or an Event when `deletionCapReached` / `rateLimited` / errors. */
  onPass?: (summary: ResyncSummary) => void | Promise<void>;
}

/**
 * The resync as a leader-only runnable for `Manager.addRunnable`: waits for the cache,
 * runs a pass at once (webhooks missed while no leader was running), another shortly after
 * (`followUpMs`), then one per interval until `signal` aborts. Every leadership starts over.
 */
export function createResyncRunnable(options: ResyncRunnableOptions): Runnable {
  const interval = options.intervalMs ?? 5 * 60_000;
  const followUp = Math.min(options.followUpMs ?? 30_000, interval);
  const logger = options.logger ?? silentLogger;
  return {
    name: 'pull-request-resync',
    async start(signal) {
      try {
        await options.environments.waitForSync?.(signal);
      } catch {
        return; // aborted before the cache synced
      }
      for (let passes = 1; !signal.aborted; passes++) {
        try {
          const summary = await resyncOnce(options);
          await options.onPass?.(summary);
        } catch (err) {
          logger.error({ err }, 'resync pass failed');
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, passes === 1 ? followUp : interval);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          signal.addEventListener('abort', done, { once: true });
        });
      }
    },
  };
}
