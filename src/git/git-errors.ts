// Typed failures of the git layer. Their messages are written for a PR comment or a status
// condition: they say what failed and why, and never contain credentials.

/** Which input was rejected before anything reached git. */
export type GitInputField = 'owner' | 'repo' | 'sha' | 'branch' | 'cloneUrl' | 'path';

/** An owner, repository, SHA, branch, URL or path that does not pass validation; git never ran. */
export class InvalidGitInputError extends Error {
  override readonly name = 'InvalidGitInputError';
  constructor(
    readonly field: GitInputField,
    readonly value: string,
    reason: string,
  ) {
    super(`invalid ${field} ${JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value)}: ${reason}`);
  }
}

export type GitFailureReason =
  /** The remote does not have the commit (force-pushed away, or never existed). */
  | 'commit-not-found'
  /** The remote has no such branch. */
  | 'branch-not-found'
  /** The repository does not exist, or the credentials may not see it (GitHub answers 404 for both). */
  | 'repository-not-found'
  /** The remote refused the credentials. */
  | 'authentication'
  /** The remote could not be reached (DNS, connection, TLS). */
  | 'unreachable'
  /** The path exists at that commit but is a directory, symlink or submodule, or is too large. */
  | 'not-a-regular-file'
  /** git produced no output for longer than the configured timeout and was killed. */
  | 'timeout'
  /** The commit is larger than a checkout may be, or git's answer longer than the caller takes. */
  | 'too-large'
  /** Anything else; the message carries git's own words. */
  | 'git-failed';

export class GitOperationError extends Error {
  override readonly name = 'GitOperationError';
  constructor(
    readonly reason: GitFailureReason,
    message: string,
    /** git's stderr, credentials redacted, for logs. */
    readonly detail?: string,
  ) {
    super(message);
  }
}
