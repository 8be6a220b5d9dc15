// The repositories a GitHub App can see: every installation of the App (or the one configured),
// then each installation's repositories. The resync reads them all, so a repository's first pull
// request is found even when its `opened` delivery was lost and nothing else names the repository.
import type { GitHubClient, RepositoryName } from './octokit-factory.js';

export interface InstallationRepository extends RepositoryName {
  installationId: number;
}

/**
 * Lists what the App's installations cover, skipping suspended installations (their tokens are
 * refused). Every GET is conditional, so an unchanged list costs 304s, not rate limit.
 */
export async function listInstallationRepositories(
  appClient: GitHubClient,
  forInstallation: (installationId: number) => GitHubClient,
  installationId?: number,
): Promise<InstallationRepository[]> {
  const ids =
    installationId !== undefined
      ? [installationId]
      : (await appClient.paginate(appClient.rest.apps.listInstallations, { per_page: 100 }))
          .filter((installation) => !installation.suspended_at)
          .map((installation) => installation.id);
  const found: InstallationRepository[] = [];
  for (const id of ids) {
    const client = forInstallation(id);
    const repositories = await client.paginate(client.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    for (const r of repositories) found.push({ owner: r.owner.login, name: r.name, installationId: id });
  }
  return found;
}
