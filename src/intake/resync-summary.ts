// What one resync pass did, as data (for metrics, Events and tests) and as one log line that
// names what an operator should act on: a reached deletion cap, a rate limit, errors.
import type { Logger } from '../kube/logger.js';

export interface ResyncError {
  repository: string;
  pullRequest?: number;
  /** `list`, `get`, `facts`, `upsert`, `delete`. */
  operation: string;
  message: string;
  rateLimited: boolean;
}

export interface ResyncSummary {
  startedAt: string;
  durationMs: number;
  /** Repositories read: with environments, configured, or covered by the App's installations. */
  repositories: number;
  /** Repositories whose open pull requests were listed completely. */
  listedRepositories: number;
  /** Open pull requests seen in the listings. */
  pullRequestsSeen: number;
  /** GitHub requests the pass sent (each page and each confirming GET). */
  requests: number;
  /** Of those, answers unchanged since this client last asked: 304s, which cost no rate limit. */
  notModified: number;
  created: string[];
  updated: string[];
  deleted: string[];
  /** Environments already as the decision wants them. */
  unchanged: number;
  /** Writes dropped because a webhook delivery newer than the listing asked for another. */
  superseded: number;
  /** Writes refused because the environment records a newer update of the pull request than the listing. */
  stale: number;
  /** Pull requests the decision ignores (facts the CRD cannot express). */
  ignored: number;
  /** Untrusted pull requests whose approval label was not taken into account (see resync-approval.ts). */
  unconfirmedApprovals: number;
  /** Environments of closed pull requests already being deleted: neither deleted again nor counted against the cap. */
  alreadyDeleting: number;
  /** Deletions decided but not done: over the cap, or held back because of a rate limit. */
  skippedDeletions: string[];
  deletionCapReached: boolean;
  rateLimited: boolean;
  errors: ResyncError[];
  /** One line for a log or an Event: what the pass did and anything an operator should know. */
  message: string;
}

/** The summary of a pass that has done nothing yet. */
export function emptySummary(started: number): ResyncSummary {
  return {
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    repositories: 0,
    listedRepositories: 0,
    pullRequestsSeen: 0,
    requests: 0,
    notModified: 0,
    created: [],
    updated: [],
    deleted: [],
    unchanged: 0,
    superseded: 0,
    stale: 0,
    ignored: 0,
    unconfirmedApprovals: 0,
    alreadyDeleting: 0,
    skippedDeletions: [],
    deletionCapReached: false,
    rateLimited: false,
    errors: [],
    message: '',
  };
}

/** Closes the pass's summary: the cap flag, the duration and the message, logged as a warning when something needs a look. */
export function finishSummary(summary: ResyncSummary, started: number, maxDeletions: number, logger: Logger): ResyncSummary {
  summary.deletionCapReached = !summary.rateLimited && summary.skippedDeletions.length > 0;
  summary.durationMs = Date.now() - started;
  summary.message = summaryMessage(summary, maxDeletions);
  const fields = {
    ...summary,
    created: summary.created.length,
    updated: summary.updated.length,
    deleted: summary.deleted.length,
    skippedDeletions: summary.skippedDeletions.length,
    errors: summary.errors.length,
  };
  if (summary.deletionCapReached || summary.errors.length > 0) logger.warn(fields, summary.message);
  else logger.info(fields, summary.message);
  return summary;
}

function summaryMessage(s: ResyncSummary, maxDeletions: number): string {
  const parts = [
    `resync: ${s.listedRepositories}/${s.repositories} repositories listed, ${s.pullRequestsSeen} open pull requests, ` +
      `${s.requests} requests (${s.notModified} not modified)`,
    `${s.created.length} created, ${s.updated.length} updated, ${s.deleted.length} deleted`,
  ];
  if (s.alreadyDeleting > 0) parts.push(`${s.alreadyDeleting} already being deleted`);
  if (s.superseded > 0) parts.push(`${s.superseded} write(s) left to newer webhook deliveries`);
  if (s.stale > 0) parts.push(`${s.stale} write(s) refused: the environment records a newer update of the pull request than the listing`);
  if (s.deletionCapReached) {
    const names = `${s.skippedDeletions.slice(0, 5).join(', ')}${s.skippedDeletions.length > 5 ? ', …' : ''}`;
    parts.push(
      `deletion cap reached: ${s.skippedDeletions.length} more environment(s) of closed pull requests wait for the next pass ` +
        `(maxDeletionsPerPass ${maxDeletions}): ${names}`,
    );
  }
  if (s.rateLimited) parts.push(`rate limited by GitHub: ${s.skippedDeletions.length} deletion(s) held back`);
  if (s.unconfirmedApprovals > 0) {
    parts.push(
      `${s.unconfirmedApprovals} untrusted pull request(s) carry an approval label not confirmed for their head commit` + ' (not deployed)',
    );
  }
  if (s.errors.length > 0) parts.push(`${s.errors.length} error(s), first: ${errorLine(s.errors[0]!)}`);
  return parts.join('; ');
}

function errorLine(error: ResyncError): string {
  return `${error.repository}${error.pullRequest ? `#${error.pullRequest}` : ''} ${error.operation}: ${error.message}`;
}
