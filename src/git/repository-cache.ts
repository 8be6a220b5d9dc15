// Checkouts of repositories at exact commits, served from a cache of bare repositories.
//
//   <cacheDir>/repositories/<owner>/<repo>.git   one bare, shallow repository per GitHub repository
//   <cacheDir>/checkouts/<owner>/<repo>/<sha>-<n> one worktree per checkout, removed after use
//   <cacheDir>/home                              empty HOME for git: no user configuration applies
//
// Commits are fetched by exact SHA at depth 1 (never a moving ref) and pinned under
// refs/preview-cache/<sha>; the newest `maxCachedCommits` per repository stay pinned. Every step
// that changes a bare repository (fetch, worktree add/remove, ref eviction) holds that
// repository's lock, so concurrent checkouts of one repository never corrupt it; the caller's
// work on a worktree runs outside the lock. One operator process owns a cache directory.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { GitOperationError } from './git-errors.js';
import { defaultPassEnvironment, GitRunner } from './git-runner.js';
import { KeyedLock } from './keyed-lock.js';
import {
  validateBranch, validateCloneUrl, validateOwner, validateRepo, validateRepositoryPath, validateSha,
} from './repository-coordinates.js';

export interface RepositoryCacheOptions {
  /** Directory the cache owns (created if missing). */
  cacheDir: string;
  /** Git processes allowed to run at once across all repositories (default 4). */
  maxConcurrentGitProcesses?: number;
  /** A git process silent for this long is killed (default 120 s). */
  gitTimeoutMs?: number;
  /** URL protocols a clone URL may use (default `['https:']`; tests add `'file:'`). */
  allowedProtocols?: readonly string[];
  /** Commits kept pinned per repository (default 50); older ones become garbage for git gc. */
  maxCachedCommits?: number;
  /** Largest file readFile returns (default 1 MiB). */
  maxFileBytes?: number;
  /** Operator environment variables git may see when set (default: proxies and CA bundles). */
  passEnvironment?: readonly string[];
}

/** A GitHub repository and how to reach it. */
export interface RepositoryLocation {
  cloneUrl: string;
  owner: string;
  repo: string;
  /** Installation token; sent per command, never stored. Omit for public or local repositories. */
  token?: string;
}

/** One exact commit of a repository. */
export interface CommitLocation extends RepositoryLocation {
  /** Full 40- (or 64-) hex SHA. */
  sha: string;
}

interface ValidCommit {
  url: URL;
  owner: string;
  repo: string;
  sha: string;
  token?: string;
  key: string;
  bareDir: string;
}

const pinPrefix = 'refs/preview-cache/';

export class RepositoryCache {
  readonly cacheDir: string;
  private readonly git: GitRunner;
  private readonly locks = new KeyedLock();
  private readonly allowedProtocols: readonly string[];
  private readonly maxCachedCommits: number;
  private readonly maxFileBytes: number;
  /** Repositories whose leftovers from an earlier process were cleared by this one. */
  private readonly recovered = new Set<string>();

  constructor(options: RepositoryCacheOptions) {
    this.cacheDir = path.resolve(options.cacheDir);
    this.allowedProtocols = options.allowedProtocols ?? ['https:'];
    this.maxCachedCommits = options.maxCachedCommits ?? 50;
    this.maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
    this.git = new GitRunner({
      maxConcurrentProcesses: options.maxConcurrentGitProcesses ?? 4,
      timeoutMs: options.gitTimeoutMs ?? 120_000,
      homeDir: path.join(this.cacheDir, 'home'),
      passEnvironment: options.passEnvironment ?? defaultPassEnvironment,
    });
  }

  /** Git processes running right now. */
  get runningGitProcesses(): number {
    return this.git.running;
  }

  /**
   * Checks out `commit` into a fresh worktree, calls `use` with its absolute path, and removes
   * the worktree when `use` settles (also when it throws). Symlinks in the repository are
   * checked out as plain files holding the link text, so nothing in a checkout points outside it.
   */
  async withCheckout<T>(commit: CommitLocation, use: (dir: string) => Promise<T>): Promise<T> {
    const target = this.validate(commit);
    const dir = path.join(this.cacheDir, 'checkouts', target.key, `${target.sha}-${randomBytes(4).toString('hex')}`);
    await this.locks.run(target.key, async () => {
      await this.prepare(target);
      await mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
      try {
        // Not --quiet: simple-git waits an extra 50 ms after a command that printed nothing.
        await this.git.run(target.bareDir, ['worktree', 'add', '--detach', dir, target.sha], {
          config: ['core.symlinks=false'],
        });
      } catch (err) {
        await this.removeWorktree(target.bareDir, dir);
        throw err;
      }
    });
    try {
      return await use(dir);
    } finally {
      await this.locks.run(target.key, () => this.removeWorktree(target.bareDir, dir));
    }
  }

  /**
   * The content of `filePath` at `commit`, read from the bare cache without a worktree, or
   * undefined when the commit has no such path. A directory, symlink, submodule or a file larger
   * than `maxFileBytes` is an error (`not-a-regular-file`), so a symlink can never make the
   * operator read a file of its own.
   */
  async readFile(commit: CommitLocation, filePath: string): Promise<string | undefined> {
    const target = this.validate(commit);
    const file = validateRepositoryPath(filePath);
    return this.locks.run(target.key, async () => {
      await this.prepare(target);
      // --literal-pathspecs: the path is a name, never a glob or pathspec magic.
      const listing = await this.git.run(target.bareDir, ['--literal-pathspecs', 'ls-tree', '-z', '-l', target.sha, '--', file]);
      const entry = listing.split('\0').find((line) => line.endsWith(`\t${file}`));
      if (!entry) return undefined;
      const [meta] = entry.split('\t') as [string];
      const [mode, type, object, size] = meta.split(/\s+/) as [string, string, string, string];
      if (type !== 'blob' || (mode !== '100644' && mode !== '100755')) {
        const kind = type === 'tree' ? 'a directory' : mode === '120000' ? 'a symbolic link' : type === 'commit' ? 'a submodule' : `a ${type}`;
        throw new GitOperationError('not-a-regular-file', `${file} at ${target.sha.slice(0, 12)} is ${kind}, not a regular file`);
      }
      if (Number(size) > this.maxFileBytes) {
        throw new GitOperationError('not-a-regular-file', `${file} at ${target.sha.slice(0, 12)} is ${size} bytes, more than the ${this.maxFileBytes} allowed`);
      }
      return this.git.run(target.bareDir, ['cat-file', 'blob', object]);
    });
  }

  /**
   * The SHA the branch points to on the remote right now (`git ls-remote`). Use it to pin a
   * moving branch (e.g. the base branch of an untrusted PR) to one commit, then read at that SHA.
   */
  async resolveBranch(repository: RepositoryLocation, branch: string): Promise<string> {
    validateOwner(repository.owner);
    validateRepo(repository.repo);
    const url = validateCloneUrl(repository.cloneUrl, this.allowedProtocols);
    const name = validateBranch(branch);
    const ref = `refs/heads/${name}`;
    await mkdir(this.cacheDir, { recursive: true, mode: 0o700 });
    const out = await this.git.run(this.cacheDir, ['ls-remote', '--', url.href, ref], { remote: url, token: repository.token });
    // ls-remote patterns match ref name tails; only the exact ref counts.
    const line = out.split('\n').find((l) => l.endsWith(`\t${ref}`));
    if (!line) {
      throw new GitOperationError('branch-not-found', `branch ${name} does not exist in ${repository.owner}/${repository.repo}`);
    }
    return validateSha(line.split('\t')[0]!);
  }

  private validate(commit: CommitLocation): ValidCommit {
    const owner = validateOwner(commit.owner);
    const repo = validateRepo(commit.repo);
    const sha = validateSha(commit.sha);
    const url = validateCloneUrl(commit.cloneUrl, this.allowedProtocols);
    // GitHub names are case-insensitive: one cache per repository whatever the spelling.
    const key = path.posix.join(owner.toLowerCase(), repo.toLowerCase());
    return { url, owner, repo, sha, token: commit.token, key, bareDir: path.join(this.cacheDir, 'repositories', `${key}.git`) };
  }

  /** Under the repository lock: the bare repository exists and holds the commit. */
  private async prepare(target: ValidCommit): Promise<void> {
    await this.ensureBareRepository(target);
    if (await this.hasCommit(target)) return;
    try {
      // --progress: the timeout counts silence, and a large healthy fetch is silent without it.
      await this.git.run(
        target.bareDir,
        ['fetch', '--depth=1', '--no-tags', '--no-write-fetch-head', '--progress', '--', target.url.href, `${target.sha}:${pinPrefix}${target.sha}`],
        // Background gc would outlive the lock and the process limit: run it inline.
        { remote: target.url, token: target.token, config: ['gc.autoDetach=false', 'maintenance.autoDetach=false'] },
      );
    } catch (err) {
      if (err instanceof GitOperationError && err.reason === 'commit-not-found') {
        throw new GitOperationError(
          'commit-not-found',
          `commit ${target.sha} is not in ${target.owner}/${target.repo} (force-pushed away, or never pushed)`,
          err.detail,
        );
      }
      throw err;
    }
    await this.evictOldCommits(target);
  }

  private async ensureBareRepository(target: ValidCommit): Promise<void> {
    if (!this.recovered.has(target.key)) {
      // Worktrees left by a previous process (crash, kill) are gone from disk after this.
      await rm(path.join(this.cacheDir, 'checkouts', target.key), { recursive: true, force: true });
      if (existsSync(path.join(target.bareDir, 'HEAD'))) await this.git.run(target.bareDir, ['worktree', 'prune']);
      this.recovered.add(target.key);
    }
    if (existsSync(path.join(target.bareDir, 'HEAD'))) return;
    // A directory without HEAD is an init that never finished.
    await rm(target.bareDir, { recursive: true, force: true });
    await mkdir(target.bareDir, { recursive: true, mode: 0o700 });
    await this.git.run(target.bareDir, ['init', '--bare', '--quiet']);
  }

  private async hasCommit(target: ValidCommit): Promise<boolean> {
    try {
      // -t rather than -e: see the note on worktree add about silent commands.
      return (await this.git.run(target.bareDir, ['cat-file', '-t', `${target.sha}^{commit}`])).trim() === 'commit';
    } catch {
      return false;
    }
  }

  private async evictOldCommits(target: ValidCommit): Promise<void> {
    const pinned = (await this.git.run(target.bareDir, ['for-each-ref', '--sort=-committerdate', '--format=%(refname)', pinPrefix]))
      .split('\n').filter(Boolean);
    for (const ref of pinned.slice(this.maxCachedCommits)) {
      if (ref === `${pinPrefix}${target.sha}`) continue;
      await this.git.run(target.bareDir, ['update-ref', '-d', ref]);
    }
  }

  private async removeWorktree(bareDir: string, dir: string): Promise<void> {
    try {
      await this.git.run(bareDir, ['worktree', 'remove', '--force', dir]);
    } catch {
      // The caller may have made the worktree unremovable for git (e.g. deleted its .git file).
      await rm(dir, { recursive: true, force: true });
      await this.git.run(bareDir, ['worktree', 'prune']);
    }
  }
}
