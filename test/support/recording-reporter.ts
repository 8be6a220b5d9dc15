// A Reporter for the controller's tests: records every call and answers with the ids the
// GitHub reporter would return, computed by the same pure planning functions (so a second
// identical report shows zero writes, exactly like on GitHub), without any network.
import { planCheck } from '../../src/github/reporting/check-plan.js';
import { renderComment } from '../../src/github/reporting/comment-body.js';
import { commentHash } from '../../src/github/reporting/comment-sticky.js';
import { planDeployment } from '../../src/github/reporting/deployment-plan.js';
import type { EnvironmentReport, EnvironmentState, ReportedGitHubIds, Reporter } from '../../src/github/reporting/reporter.js';
import { waitFor } from './wait.js';

export interface RecordedReport {
  input: EnvironmentReport;
  /** What `report` returned (absent when the call was made to fail). */
  result?: ReportedGitHubIds;
  /** The comment body the GitHub reporter would have rendered. */
  comment: string;
  /** The writes the GitHub reporter would have sent, e.g. `comment:create`, `deployment-status:success`. */
  writes: string[];
  error?: unknown;
}

export class RecordingReporter implements Reporter {
  readonly reports: RecordedReport[] = [];
  private readonly failures: unknown[] = [];
  private lastId = 0;

  /** `check-run` mirrors App auth, `commit-status` token auth. */
  constructor(private readonly mode: 'check-run' | 'commit-status' = 'check-run') {}

  /** The next `count` calls are recorded and then fail with `error`, like a GitHub outage. */
  failNext(error: unknown = new Error('injected reporter failure'), count = 1): void {
    for (let i = 0; i < count; i++) this.failures.push(error);
  }

  async report(input: EnvironmentReport): Promise<ReportedGitHubIds> {
    const known = input.known;
    const comment = renderComment(input);
    const record: RecordedReport = { input: structuredClone(input), comment, writes: [] };
    this.reports.push(record);
    const failure = this.failures.shift();
    if (failure !== undefined) {
      record.error = failure;
      throw failure;
    }
    const ids: ReportedGitHubIds = { ...known };

    const hash = commentHash(comment);
    if (known.commentId === undefined) {
      ids.commentId = ++this.lastId;
      record.writes.push('comment:create');
    } else if (known.lastCommentHash !== hash) {
      record.writes.push('comment:update');
    }
    ids.lastCommentHash = hash;

    const deployment = planDeployment(input, ids);
    if (deployment.create) {
      ids.deploymentId = ++this.lastId;
      ids.deploymentSha = deployment.create.sha;
      ids.deploymentStatus = undefined;
      record.writes.push('deployment:create');
    }
    if (deployment.status) {
      ids.deploymentStatus = deployment.status.key;
      record.writes.push(`deployment-status:${deployment.status.state}`);
    }
    for (const _ of deployment.inactivate) record.writes.push('deployment-status:inactive');
    ids.servingDeploymentId = deployment.serving === 'current' ? ids.deploymentId : deployment.serving;

    const check = planCheck(input, ids, this.mode);
    if (check?.kind === 'check-run') {
      if (check.action === 'create') ids.checkRunId = ++this.lastId;
      ids.checkSha = check.sha;
      ids.checkState = check.key;
      record.writes.push(`check-run:${check.action}`);
    } else if (check?.kind === 'commit-status') {
      ids.checkSha = check.sha;
      ids.checkState = check.key;
      record.writes.push(`commit-status:${check.state}`);
    }

    const result = Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) as ReportedGitHubIds;
    record.result = result;
    return result;
  }

  /** The reports of one PR, oldest first. */
  reportsFor(repository: { owner: string; name: string }, pullRequest: number): RecordedReport[] {
    return this.reports.filter(
      (r) =>
        r.input.pullRequest === pullRequest && r.input.repository.owner === repository.owner && r.input.repository.name === repository.name,
    );
  }

  /** The states reported for one PR, consecutive repeats collapsed (`['deploying', 'ready']`). */
  statesFor(repository: { owner: string; name: string }, pullRequest: number): EnvironmentState[] {
    const states = this.reportsFor(repository, pullRequest).map((r) => r.input.state);
    return states.filter((s, i) => i === 0 || states[i - 1] !== s);
  }

  lastFor(repository: { owner: string; name: string }, pullRequest: number): RecordedReport | undefined {
    return this.reportsFor(repository, pullRequest).at(-1);
  }

  /** Waits until the PR's latest report is in `state`; returns that report. */
  waitForState(
    repository: { owner: string; name: string },
    pullRequest: number,
    state: EnvironmentState,
    timeoutMs = 60_000,
  ): Promise<RecordedReport> {
    return waitFor(
      `PR #${pullRequest} reported ${state}`,
      () => {
        const last = this.lastFor(repository, pullRequest);
        return last?.input.state === state ? last : undefined;
      },
      { timeoutMs },
    );
  }
}
