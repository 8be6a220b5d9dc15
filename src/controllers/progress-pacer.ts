// How often a deploying environment's progress is written and reported. While an environment
// comes up, each of its resources changes its readiness message several times (replicas 0/2,
// 1/2, 2/2; the database provisioning, then ready), and every change would be a status write
// and an edit of the PR comment. A new head SHA and every change of state (ready, failed) go
// out at once; between them, progress goes out at most once per interval, and the controller
// requeues itself for the end of the interval so the latest progress goes out then
// (level-triggered: nothing is lost, only coalesced). GitHub counts comment edits against its
// content-creation limits (about 80 a minute), so a burst of pull requests must not spend them
// on intermediate states; nor the API server its writes.

export class ProgressPacer {
  private readonly last = new Map<string, { sha: string; at: number }>();

  /** `intervalMs` 0 reports every change. */
  constructor(readonly intervalMs: number) {}

  /** Milliseconds until `name`'s progress at `sha` may go out again; 0: now. */
  wait(name: string, sha: string, now: number): number {
    const last = this.last.get(name);
    if (!last || last.sha !== sha) return 0;
    return Math.max(0, last.at + this.intervalMs - now);
  }

  /** `name`'s progress at `sha` was written and reported at `now`. */
  reported(name: string, sha: string, now: number): void {
    this.last.set(name, { sha, at: now });
  }

  /** The environment is ready (or gone): its next progress goes out at once. */
  forget(name: string): void {
    this.last.delete(name);
  }
}
