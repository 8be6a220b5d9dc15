// Carries out a DeploymentPlan with the Deployments API.
import type { DeploymentPlan } from './deployment-plan.js';
import { statusDescription } from './deployment-plan.js';
import { createOnce } from '../octokit-create-once.js';
import type { GitHubClient, RepositoryName } from '../octokit-factory.js';
import { deploymentEnvironment, type ReportedGitHubIds } from './reporter.js';

type DeploymentIds = Pick<ReportedGitHubIds, 'deploymentId' | 'deploymentSha' | 'deploymentStatus' | 'servingDeploymentId'>;

const status = (err: unknown) => (err as { status?: number }).status;

/**
 * The Deployment of `sha` in the PR's environment: an existing one (created before a restart
 * lost its id, or by a create whose answer was lost), found by ref + SHA + environment, else a
 * new one — transient, not production, no auto-merge, no status checks (the operator decides
 * when to deploy, GitHub must not refuse or merge anything).
 */
async function deploymentFor(client: GitHubClient, repository: RepositoryName, pullRequest: number, sha: string): Promise<number> {
  const params = { owner: repository.owner, repo: repository.name };
  const environment = deploymentEnvironment(pullRequest);
  const find = async () => (await client.rest.repos.listDeployments({ ...params, ref: sha, sha, environment, per_page: 1 })).data[0]?.id;
  return (
    (await find()) ??
    (await createOnce(client, {
      find,
      create: async () => {
        const created = await client.rest.repos.createDeployment({
          ...params,
          ref: sha,
          environment,
          transient_environment: true,
          production_environment: false,
          auto_merge: false,
          required_contexts: [],
          description: statusDescription(`Preview of pull request #${pullRequest} at ${sha.slice(0, 7)}`),
          payload: { pull_request: pullRequest },
        });
        if ('id' in created.data) return created.data.id;
        throw new Error(`GitHub did not create a deployment for ${sha}: ${created.data.message ?? created.status}`);
      },
    }))
  );
}

export async function applyDeploymentPlan(
  client: GitHubClient,
  repository: RepositoryName,
  pullRequest: number,
  plan: DeploymentPlan,
  known: DeploymentIds,
): Promise<DeploymentIds> {
  const params = { owner: repository.owner, repo: repository.name };
  const ids: DeploymentIds = {
    deploymentId: known.deploymentId,
    deploymentSha: known.deploymentSha,
    deploymentStatus: known.deploymentStatus,
    servingDeploymentId: known.servingDeploymentId,
  };
  if (plan.create) {
    ids.deploymentId = await deploymentFor(client, repository, pullRequest, plan.create.sha);
    ids.deploymentSha = plan.create.sha;
    ids.deploymentStatus = undefined;
  }
  if (plan.status && ids.deploymentId !== undefined) {
    await client.rest.repos.createDeploymentStatus({
      ...params,
      deployment_id: ids.deploymentId,
      state: plan.status.state,
      description: plan.status.description,
      ...(plan.status.environmentUrl ? { environment_url: plan.status.environmentUrl } : {}),
    });
    ids.deploymentStatus = plan.status.key;
  }
  for (const id of plan.inactivate) {
    try {
      await client.rest.repos.createDeploymentStatus({ ...params, deployment_id: id, state: 'inactive', description: 'Superseded' });
    } catch (err) {
      // Deleted by someone: it is not active any more either.
      if (status(err) !== 404) throw err;
    }
  }
  ids.servingDeploymentId = plan.serving === 'current' ? ids.deploymentId : plan.serving;
  return ids;
}
