import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GitOperationError } from '../git/git-errors.js';
import { GitHubRateLimitedError, isRateLimited } from './octokit-rate-limit.js';
import { gitHubApiFailure, httpStatus } from './preview-files-api-errors.js';

/** What Octokit throws: a RequestError with the status, and the response when one came. */
function requestError(message: string, status: number, response?: { headers: Record<string, string> }): Error {
  return Object.assign(new Error(message), {
    name: 'HttpError',
    status,
    ...(response
      ? { response: { status, url: 'https://api.github.com/repos/o/r/contents/.preview', data: { message }, ...response } }
      : {}),
  });
}
const answered = (status: number, message: string, headers: Record<string, string> = {}) => requestError(message, status, { headers });
// Octokit reports a request that got no answer as status 500 without a response.
const unanswered = () => requestError('connect ECONNREFUSED 140.82.112.6:443', 500);
const reason = (err: unknown) => gitHubApiFailure(err, 'listing .preview/ at 0123456789ab', 'o/r').reason;

describe('gitHubApiFailure', () => {
  it('credentials refused, or access denied, are authentication; the 403 message names the permission', () => {
    assert.equal(reason(answered(401, 'Bad credentials')), 'authentication');
    const denied = gitHubApiFailure(answered(403, 'Resource not accessible by integration'), 'listing .preview/ at 0123456789ab', 'o/r');
    assert.equal(denied.reason, 'authentication');
    assert.match(
      denied.message,
      /GitHub API denied listing \.preview\/ at 0123456789ab in o\/r \(403: Resource not accessible by integration\); .*Contents: read/,
    );
  });

  it('rate limits are transient, whether 403 or 429, primary or secondary, or refused before sending', () => {
    assert.equal(reason(answered(403, 'API rate limit exceeded for installation ID 1.', { 'x-ratelimit-remaining': '0' })), 'git-failed');
    assert.equal(reason(answered(403, 'You have exceeded a secondary rate limit.', { 'retry-after': '60' })), 'git-failed');
    assert.equal(reason(answered(429, 'Too Many Requests')), 'git-failed');
    assert.equal(
      reason(new GitHubRateLimitedError('installation:1', new Date(Date.now() + 3_600_000), 'primary rate limit exhausted')),
      'git-failed',
    );
    assert.equal(isRateLimited(answered(403, 'Resource not accessible by integration')), false);
  });

  it('a repository gone, hidden or blocked is repository-not-found', () => {
    for (const status of [404, 410, 451]) assert.equal(reason(answered(status, 'Not Found')), 'repository-not-found', String(status));
  });

  it('server errors are transient; no answer at all is unreachable', () => {
    assert.equal(reason(answered(502, 'Server Error')), 'git-failed');
    assert.equal(httpStatus(unanswered()), undefined);
    const err = gitHubApiFailure(unanswered(), 'reading .preview/preview.yaml at 0123456789ab', 'o/r');
    assert.equal(err.reason, 'unreachable');
    assert.match(err.message, /the GitHub API could not be reached while reading .* ECONNREFUSED/);
  });

  it('a GitOperationError passes through unchanged', () => {
    const original = new GitOperationError('commit-not-found', 'gone');
    assert.equal(gitHubApiFailure(original, 'x', 'o/r'), original);
  });
});
