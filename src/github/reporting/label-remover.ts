// Removing a label from a pull request on GitHub, as the ApprovalRevoker needs it: the goal
// is that the label is gone, so "it was not there" (GitHub's 404) counts as success.
import type { RemoveLabel } from './approval-revoker.js';
import type { GitHubClients } from '../octokit-factory.js';

/**
 * `DELETE /repos/{owner}/{repo}/issues/{number}/labels/{label}` with the client of the
 * repository (an App: its installation). Resolves on 200 and 404; any other failure
 * (5xx after the client's retries, a rate limit, 403 for a missing permission) rejects,
 * so the revoker retries with backoff.
 */
export function createLabelRemover(clients: GitHubClients): RemoveLabel {
  return async (owner, repo, number, label) => {
    const client = await clients.forRepository({ owner, name: repo });
    try {
      await client.rest.issues.removeLabel({ owner, repo, issue_number: number, name: label });
    } catch (err) {
      if ((err as { status?: number }).status === 404) return;
      throw err;
    }
  };
}
