// Carries out a CheckPlan: a check run (App) or a commit status (token) on the head SHA.
import { checkName, type CheckPlan } from './check-plan.js';
import type { GitHubClient, RepositoryName } from '../octokit-factory.js';
import type { ReportedGitHubIds } from './reporter.js';

type CheckIds = Pick<ReportedGitHubIds, 'checkRunId' | 'checkSha' | 'checkState'>;

const status = (err: unknown) => (err as { status?: number }).status;

export async function applyCheckPlan(client: GitHubClient, repository: RepositoryName, plan: CheckPlan, known: CheckIds): Promise<CheckIds> {
  if (!plan) return { checkRunId: known.checkRunId, checkSha: known.checkSha, checkState: known.checkState };
  const params = { owner: repository.owner, repo: repository.name };
  if (plan.kind === 'commit-status') {
    await client.rest.repos.createCommitStatus({
      ...params,
      sha: plan.sha,
      state: plan.state,
      context: checkName,
      description: plan.description,
      ...(plan.targetUrl ? { target_url: plan.targetUrl } : {}),
    });
    return { checkRunId: undefined, checkSha: plan.sha, checkState: plan.key };
  }
  const fields = {
    status: plan.status,
    ...(plan.conclusion ? { conclusion: plan.conclusion } : {}),
    ...(plan.detailsUrl ? { details_url: plan.detailsUrl } : {}),
    output: { title: plan.title, summary: plan.summary },
  };
  if (plan.action === 'update' && known.checkRunId !== undefined) {
    try {
      await client.rest.checks.update({ ...params, check_run_id: known.checkRunId, ...fields });
      return { checkRunId: known.checkRunId, checkSha: plan.sha, checkState: plan.key };
    } catch (err) {
      if (status(err) !== 404) throw err;
    }
  }
  const created = await client.rest.checks.create({ ...params, name: checkName, head_sha: plan.sha, ...fields });
  return { checkRunId: created.data.id, checkSha: plan.sha, checkState: plan.key };
}
