// How often a deploying environment's progress is written and reported. While an environment
// comes up, each of its resources changes its readiness message several times (replicas 0/2,
// 1/2, 2/2; the database provisioning, then ready), and every change would be a status write
// and an edit of the PR comment. A new head SHA and every change of state (ready, failed) go
// out at once; between them, progress goes out at most once per interval, and the controller
// requeues itself for the end of the interval so the latest progress goes out then
// (level-triggered: nothing is lost, only coalesced). GitHub counts comment edits against its
// content-creation limits (about 80 a minute), so a burst of pull requests must not spend them
// on intermediate states; nor the API server its writes.
//
// The last write is read from the status itself (`lastReconciled` moves only with a written
// change), so the pacing holds across restarts and a change of leader. The Algorithm controller
// paces its rollouts' progress by the same interval (algorithm-status-pacing.ts, with `waitSince`).

/** The status fields the pacing reads. */
export interface PacedStatus {
  phase?: string;
  deployedSha?: string;
  lastReconciled?: string;
}

/** The progress interval both the PreviewEnvironment and the Algorithm controller default to. */
export const defaultProgressIntervalMs = 10_000;

/**
 * Milliseconds until more progress of `sha` may be written; 0: now. Only a deploy of `sha`
 * already written as Deploying waits; `intervalMs` 0 writes every change.
 */
export function progressWait(status: PacedStatus | undefined, sha: string, now: number, intervalMs: number): number {
  if (status?.phase !== 'Deploying' || status.deployedSha !== sha) return 0;
  return waitSince(status.lastReconciled, now, intervalMs);
}

/**
 * Milliseconds until `intervalMs` have passed since `time`, a time as the API server writes it
 * (RFC 3339, whole seconds); 0: now, or no time.
 */
export function waitSince(time: string | undefined, now: number, intervalMs: number): number {
  if (!time) return 0;
  // Status times are whole seconds, cut down: the time shown is when that settle began, to the
  // second, so the interval counts from the end of that second.
  const last = Date.parse(time) + 1000;
  // Never longer than the interval: a clock ahead of ours (another leader's) must not stretch it.
  return Number.isNaN(last) ? 0 : Math.min(intervalMs, Math.max(0, last + intervalMs - now));
}
