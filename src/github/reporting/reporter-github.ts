// The Reporter on GitHub: the sticky comment, the Deployments and the check, in that
// order, each skipped when what `known` records is already on GitHub.
import type { Logger } from '../../kube/logger.js';
import { silentLogger } from '../../kube/logger.js';
import { planCheck } from './check-plan.js';
import { applyCheckPlan } from './check-report.js';
import { renderComment } from './comment-body.js';
import { upsertStickyComment } from './comment-sticky.js';
import { planDeployment } from './deployment-plan.js';
import { applyDeploymentPlan } from './deployment-report.js';
import type { GitHubClients } from '../octokit-factory.js';
import { ReportError, type EnvironmentReport, type ReportedGitHubIds, type Reporter } from './reporter.js';

export interface GitHubReporterOptions {
  clients: GitHubClients;
  log?: Logger;
}

export class GitHubReporter implements Reporter {
  private readonly clients: GitHubClients;
  private readonly log: Logger;
  // Reports for one PR run one after another, so two concurrent calls can never both
  // decide that the comment is missing and create it twice.
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(options: GitHubReporterOptions) {
    this.clients = options.clients;
    this.log = options.log ?? silentLogger;
  }

  report(input: EnvironmentReport): Promise<ReportedGitHubIds> {
    const key = `${input.repository.owner}/${input.repository.name}#${input.pullRequest}`.toLowerCase();
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.reportNow(input));
    this.tails.set(key, run);
    void run
      .catch(() => {})
      .finally(() => {
        if (this.tails.get(key) === run) this.tails.delete(key);
      });
    return run;
  }

  private async reportNow(input: EnvironmentReport): Promise<ReportedGitHubIds> {
    const { repository, pullRequest } = input;
    let ids: ReportedGitHubIds = { ...input.known };
    const failures: ReportError['failures'] = [];
    let client;
    try {
      client = await this.clients.forRepository(repository);
    } catch (error) {
      throw new ReportError(`no GitHub client for ${repository.owner}/${repository.name}: ${(error as Error).message}`, ids, [
        { part: 'client', error },
      ]);
    }

    try {
      const comment = await upsertStickyComment(client, repository, pullRequest, renderComment(input), ids, this.clients.ownLogin);
      ids = { ...ids, commentId: comment.commentId, lastCommentHash: comment.hash };
    } catch (error) {
      failures.push({ part: 'comment', error });
    }
    try {
      ids = { ...ids, ...(await applyDeploymentPlan(client, repository, pullRequest, planDeployment(input, ids), ids)) };
    } catch (error) {
      failures.push({ part: 'deployment', error });
    }
    try {
      const mode = this.clients.authType === 'app' ? 'check-run' : 'commit-status';
      ids = { ...ids, ...(await applyCheckPlan(client, repository, pullRequest, planCheck(input, ids, mode), ids)) };
    } catch (error) {
      failures.push({ part: 'check', error });
    }

    ids = withoutUndefined(ids);
    if (failures.length > 0) {
      const summary = failures.map((f) => `${f.part}: ${(f.error as Error).message ?? String(f.error)}`).join('; ');
      this.log.warn(
        { repository: `${repository.owner}/${repository.name}`, pullRequest, state: input.state, failures: summary },
        'reporting to GitHub failed',
      );
      throw new ReportError(`reporting PR #${pullRequest} of ${repository.owner}/${repository.name} failed: ${summary}`, ids, failures);
    }
    return ids;
  }
}

/** The ids as they are persisted: absent, never `undefined`. */
function withoutUndefined(ids: ReportedGitHubIds): ReportedGitHubIds {
  return Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) as ReportedGitHubIds;
}
