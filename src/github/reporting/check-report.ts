// Carries out a CheckPlan: a check run (App) or a commit status (token) on the head SHA. A
// commit status is idempotent by nature (the latest per context counts); a check run is created
// once per PR and SHA: before a create it is looked for by head SHA + name + the PR's external
// id (its id lost with a restart, a push back to an earlier SHA), and a create whose answer was
// lost is looked for the same way before it is sent again (createOnce).
import { checkName, type CheckPlan } from './check-plan.js';
import { createOnce } from '../octokit-create-once.js';
import type { GitHubClient, RepositoryName } from '../octokit-factory.js';
import type { ReportedGitHubIds } from './reporter.js';

type CheckIds = Pick<ReportedGitHubIds, 'checkRunId' | 'checkSha' | 'checkState'>;

const status = (err: unknown) => (err as { status?: number }).status;

/** Marks the PR's check run: two PRs with the same head SHA each have their own. */
export const checkExternalId = (pullRequest: number) => `preview-operator/pr-${pullRequest}`;

/** The newest check run of the PR on `sha`, if any. */
async function findCheckRun(
  client: GitHubClient,
  repository: RepositoryName,
  pullRequest: number,
  sha: string,
): Promise<number | undefined> {
  for await (const page of client.paginate.iterator(client.rest.checks.listForRef, {
    owner: repository.owner,
    repo: repository.name,
    ref: sha,
    check_name: checkName,
    filter: 'all',
    per_page: 100,
  })) {
    const found = page.data.find((run) => run.external_id === checkExternalId(pullRequest));
    if (found) return found.id;
  }
  return undefined;
}

export async function applyCheckPlan(
  client: GitHubClient,
  repository: RepositoryName,
  pullRequest: number,
  plan: CheckPlan,
  known: CheckIds,
): Promise<CheckIds> {
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
  const done = (checkRunId: number): CheckIds => ({ checkRunId, checkSha: plan.sha, checkState: plan.key });
  if (plan.action === 'update' && known.checkRunId !== undefined) {
    try {
      await client.rest.checks.update({ ...params, check_run_id: known.checkRunId, ...fields });
      return done(known.checkRunId);
    } catch (err) {
      if (status(err) !== 404) throw err;
    }
  }
  const find = () => findCheckRun(client, repository, pullRequest, plan.sha);
  const existing = await find();
  if (existing !== undefined) {
    await client.rest.checks.update({ ...params, check_run_id: existing, ...fields });
    return done(existing);
  }
  return done(
    await createOnce(client, {
      find,
      create: async () =>
        (
          await client.rest.checks.create({
            ...params,
            name: checkName,
            head_sha: plan.sha,
            external_id: checkExternalId(pullRequest),
            ...fields,
          })
        ).data.id,
    }),
  );
}
