// Validation of everything that names a repository, a commit or a file before it reaches git
// or the file system: a value that passes cannot be read as an option, a path outside the cache,
// or a moving ref.
import { InvalidGitInputError } from './git-errors.js';

// GitHub logins: letters, digits and hyphens, not starting with a hyphen, at most 39 characters.
// (Old accounts may contain consecutive or trailing hyphens, so those are accepted.)
const ownerPattern = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/;
// GitHub repository names: letters, digits, '.', '_' and '-', at most 100 characters.
const repoPattern = /^[A-Za-z0-9._-]{1,100}$/;
// A full object name: SHA-1 (40) or SHA-256 (64) hex digits. Never an abbreviation or a ref.
const shaPattern = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export function validateOwner(owner: string): string {
  if (!ownerPattern.test(owner)) {
    throw new InvalidGitInputError('owner', owner, 'a GitHub owner is 1-39 letters, digits or hyphens and does not start with a hyphen');
  }
  return owner;
}

export function validateRepo(repo: string): string {
  if (!repoPattern.test(repo) || repo === '.' || repo === '..') {
    throw new InvalidGitInputError(
      'repo',
      repo,
      'a GitHub repository name is 1-100 letters, digits, ".", "_" or "-" and is not "." or ".."',
    );
  }
  return repo;
}

/** Returns the SHA in lower case: git object names are case-insensitive, cache keys are not. */
export function validateSha(sha: string): string {
  const lower = sha.toLowerCase();
  if (!shaPattern.test(lower)) {
    throw new InvalidGitInputError('sha', sha, 'expected a full commit SHA (40 or 64 hexadecimal digits)');
  }
  return lower;
}

/** A branch name as `git check-ref-format --branch` accepts it, without the refs/heads/ prefix. */
export function validateBranch(branch: string): string {
  const reject = (reason: string): never => {
    throw new InvalidGitInputError('branch', branch, reason);
  };
  if (branch.length === 0 || branch.length > 255) reject('a branch name is 1-255 characters');
  if (branch.startsWith('-')) reject('a branch name does not start with "-"');
  if (branch.startsWith('refs/')) reject('give the branch name without "refs/"');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(branch)) reject('a branch name has no spaces, control characters or any of ~ ^ : ? * [ \\');
  if (branch.includes('..') || branch.includes('@{') || branch === '@') reject('a branch name contains neither "..", "@{" nor is "@"');
  if (branch.endsWith('/') || branch.endsWith('.') || branch.includes('//'))
    reject('a branch name does not end with "/" or "." and has no empty component');
  for (const part of branch.split('/')) {
    if (part.startsWith('.') || part.endsWith('.lock')) reject('no component of a branch name starts with "." or ends with ".lock"');
  }
  return branch;
}

/**
 * A clone URL: one of the allowed protocols (https in production; file for tests), no embedded
 * credentials (those travel per command), nothing that git could read as an option.
 */
export function validateCloneUrl(cloneUrl: string, allowedProtocols: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(cloneUrl);
  } catch {
    throw new InvalidGitInputError('cloneUrl', cloneUrl, 'not an absolute URL');
  }
  if (!allowedProtocols.includes(url.protocol)) {
    throw new InvalidGitInputError(
      'cloneUrl',
      cloneUrl,
      `protocol ${url.protocol} is not allowed (allowed: ${allowedProtocols.join(', ')})`,
    );
  }
  if (url.username || url.password) {
    throw new InvalidGitInputError('cloneUrl', '<redacted>', 'credentials must not be part of the URL');
  }
  if (url.search || url.hash) throw new InvalidGitInputError('cloneUrl', cloneUrl, 'a clone URL has no query or fragment');
  if (url.protocol !== 'file:' && !url.hostname) throw new InvalidGitInputError('cloneUrl', cloneUrl, 'missing host');
  return url;
}

/**
 * A file path inside a repository: relative, POSIX separators, no empty, "." or ".." component.
 * Returns it unchanged; git sees it only after `<sha>:`.
 */
export function validateRepositoryPath(filePath: string): string {
  const reject = (reason: string): never => {
    throw new InvalidGitInputError('path', filePath, reason);
  };
  if (filePath.length === 0 || filePath.length > 4096) reject('a path is 1-4096 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f\\]/.test(filePath)) reject('a path has no control characters or backslashes');
  if (filePath.startsWith('/')) reject('a path is relative to the repository root');
  for (const part of filePath.split('/')) {
    if (part === '' || part === '.' || part === '..') reject('a path has no empty, "." or ".." component');
  }
  return filePath;
}
