// What a failed GitHub API request means to the renderer, in the git layer's own terms
// (GitOperationError reasons), so one mapping serves both ways of reading `.preview/`:
// credentials refused → `authentication`; a repository gone or hidden → `repository-not-found`
// (both a user's to fix); rate limits, 5xx and network failures → a reason the renderer does
// not map, so the reconcile throws and is retried with backoff. Messages name the GitHub API,
// never a credential.
import { GitOperationError } from '../git/git-errors.js';
import { isRateLimited } from './octokit-rate-limit.js';

interface HttpFailure {
  status?: number;
  response?: unknown;
}

/** The HTTP status GitHub answered with, or undefined when no answer came (network, abort). */
export function httpStatus(err: unknown): number | undefined {
  const failure = err as HttpFailure | undefined;
  // Octokit reports a request that got no answer as status 500 without a response.
  if (!failure || typeof failure.status !== 'number' || !failure.response) return undefined;
  return failure.status;
}

/**
 * The GitOperationError for a request that failed. `what` says what was being done
 * (`listing .preview/ at 1a2b3c4d5e6f`), `repository` is `owner/name`. 404s whose meaning
 * depends on the request (a branch, a commit) are the caller's to tell apart first.
 */
export function gitHubApiFailure(err: unknown, what: string, repository: string): GitOperationError {
  if (err instanceof GitOperationError) return err;
  const detail = (err as Error | undefined)?.message ?? String(err);
  const status = httpStatus(err);
  if (isRateLimited(err)) {
    return new GitOperationError('git-failed', `GitHub API rate limit while ${what} in ${repository}; retrying later`, detail);
  }
  if (status === undefined) {
    return new GitOperationError('unreachable', `the GitHub API could not be reached while ${what} in ${repository}: ${detail}`, detail);
  }
  if (status === 401) {
    return new GitOperationError(
      'authentication',
      `the GitHub API refused the operator's credentials while ${what} in ${repository} (401)`,
      detail,
    );
  }
  if (status === 403) {
    return new GitOperationError(
      'authentication',
      `the GitHub API denied ${what} in ${repository} (403: ${detail}); the operator's GitHub App needs the Contents: read permission on the repository`,
      detail,
    );
  }
  if (status === 404 || status === 410 || status === 451) {
    return new GitOperationError(
      'repository-not-found',
      `${repository} does not exist or is not visible to the operator's GitHub credentials (GitHub API answered ${status} while ${what})`,
      detail,
    );
  }
  return new GitOperationError('git-failed', `the GitHub API answered ${status} while ${what} in ${repository}: ${detail}`, detail);
}
