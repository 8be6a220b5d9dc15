// Checkouts of repositories at exact commits, served from a cache of bare repositories.
//
//   <cacheDir>/repositories/<owner>/<repo>.git   one bare, shallow repository per GitHub repository
//   <cacheDir>/checkouts/<owner>/<repo>/<sha>-<n> one worktree per checkout, removed after use
//   <cacheDir>/home                              empty HOME for git: no user configuration applies
//
// Commits are fetched by exact SHA at depth 1 (never a moving ref) and pinned under
// refs/preview-cache/<sha>; the newest `maxCachedCommits` per repository stay pinned. The pinned
// SHAs are read once per repository and then kept in memory, so reading at a commit the cache
// holds costs no git process beyond the read itself: every git process is forked from the
// operator, and forking a large process blocks its event loop for milliseconds. Every step
// that changes a bare repository (fetch, worktree add/remove, ref eviction) holds that
// repository's lock, so concurrent checkouts of one repository never corrupt it; the caller's
// work on a worktree runs outside the lock. One operator process owns a cache directory.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GitOperationError } from './git-errors.js';
import { defaultPassEnvironment, GitRunner } from './git-runner.js';
import { KeyedLock } from './keyed-lock.js';
import { readOneFile, type PreviewFileSource } from './preview-files.js';
import {
  validateBranch,
  validateCloneUrl,
  validateOwner,
  validateRepo,
  validateRepositoryPath,
  validateSha,
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
  /** The largest commit checked out, counted in its tree before anything is written (default: the sandbox's copy limits). */
  maxCheckout?: CheckoutLimits;
}

export interface CheckoutLimits {
  /** Files (default 20,000). */
  files: number;
  /** Directories (default 5,000): a tree can name one subtree thousands of times. */
  directories: number;
  /** Bytes of all files together (default 200 MiB). */
  bytes: number;
}

export const defaultCheckoutLimits: CheckoutLimits = { files: 20_000, directories: 5_000, bytes: 200 * 1024 * 1024 };

/**
 * The longest listing of a tree read to count it (an entry is some 60 bytes and its path): past
 * it, the tree is larger than any checkout limit, and git is stopped before the listing — a tree
 * naming a subtree thousands of times at each of ten levels lists billions of entries — is held.
 */
const maxTreeListingBytes = 16 * 1024 * 1024;

/** `$GIT_DIR/info/attributes` wins over the tree's `.gitattributes`: no conversion, filter or expansion at checkout. */
const checkoutAttributes = '* -text -eol -ident -filter -working-tree-encoding\n';

/** A GitHub repository and how to reach it. */
export interface RepositoryLocation {
  cloneUrl: string;
  owner: string;
  repo: string;
  /** Installation token; sent per command, never stored. Omit for public or local repositories. */
  token?: string;
}

/** An entry of a commit's tree, as `git ls-tree -l` lists it. */
export interface TreeEntry {
  path: string;
  kind: 'file' | 'directory' | 'symlink' | 'submodule';
  /** The blob, tree or commit id. */
  object: string;
  /** Bytes (files and symlinks; 0 otherwise). */
  size: number;
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

export class RepositoryCache implements PreviewFileSource {
  readonly cacheDir: string;
  private readonly git: GitRunner;
  private readonly locks = new KeyedLock();
  private readonly allowedProtocols: readonly string[];
  private readonly maxCachedCommits: number;
  private readonly maxFileBytes: number;
  private readonly maxCheckout: CheckoutLimits;
  /**
   * Per repository, the SHAs pinned in its bare cache, oldest first. A repository is in this map
   * once this process has cleared its predecessor's leftovers and read its refs.
   */
  private readonly pinned = new Map<string, string[]>();

  constructor(options: RepositoryCacheOptions) {
    this.cacheDir = path.resolve(options.cacheDir);
    this.allowedProtocols = options.allowedProtocols ?? ['https:'];
    this.maxCachedCommits = Math.max(1, options.maxCachedCommits ?? 50);
    this.maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
    this.maxCheckout = options.maxCheckout ?? defaultCheckoutLimits;
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

  /** Git processes started so far, by subcommand (`fetch`, `ls-tree`, ...). */
  get gitCommands(): ReadonlyMap<string, number> {
    return this.git.started;
  }

  /**
   * Checks out `commit` into a fresh worktree, calls `use` with its absolute path, and removes
   * the worktree when `use` settles (also when it throws). Symlinks in the repository are
   * checked out as plain files holding the link text, so nothing in a checkout points outside it.
   * A commit larger than `maxCheckout` is refused (`too-large`) before anything is written.
   */
  async withCheckout<T>(commit: CommitLocation, use: (dir: string) => Promise<T>): Promise<T> {
    const target = this.validate(commit);
    const dir = path.join(this.cacheDir, 'checkouts', target.key, `${target.sha}-${randomBytes(4).toString('hex')}`);
    await this.locks.run(target.key, async () => {
      await this.prepare(target);
      await this.checkCheckoutSize(target);
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
   * Counts the commit's tree, as a checkout would write it, from a listing of it (a pack of a
   * few kilobytes can name one blob millions of times: the checkout cache's disk would fill).
   */
  private async checkCheckoutSize(target: ValidCommit): Promise<void> {
    const limits = this.maxCheckout;
    const sha = target.sha.slice(0, 12);
    const refuse = (counted: string) =>
      new GitOperationError(
        'too-large',
        `the commit ${sha} is larger than a checkout may be (${counted}; at most ${limits.files} files, ${limits.directories} directories, ${limits.bytes} bytes)`,
      );
    let listing: string;
    try {
      listing = await this.git.run(target.bareDir, ['ls-tree', '-r', '-t', '-l', '-z', '--full-tree', target.sha], {
        maxOutputBytes: maxTreeListingBytes,
      });
    } catch (err) {
      if (err instanceof GitOperationError && err.reason === 'too-large')
        throw refuse(`its tree lists more than ${maxTreeListingBytes} bytes of entries`);
      throw err;
    }
    let [files, directories, bytes] = [0, 0, 0];
    for (const entry of treeEntries(listing, target.sha)) {
      if (entry.kind === 'directory') directories++;
      if (entry.kind !== 'file' && entry.kind !== 'symlink') continue;
      files++;
      bytes += entry.size;
    }
    if (files > limits.files || directories > limits.directories || bytes > limits.bytes) {
      throw refuse(`${files} files, ${directories} directories, ${bytes} bytes`);
    }
  }

  /**
   * Which of `paths` exist at `commit` and what they are, with one `git ls-tree` for all of them
   * (fetching the commit first if the cache lacks it). Absent paths are not in the map.
   */
  async listFiles(commit: CommitLocation, paths: readonly string[]): Promise<Map<string, TreeEntry>> {
    const target = this.validate(commit);
    const files = paths.map(validateRepositoryPath);
    return this.locks.run(target.key, async () => {
      await this.prepare(target);
      // --literal-pathspecs: each path is a name, never a glob or pathspec magic.
      const listing = await this.git.run(target.bareDir, ['--literal-pathspecs', 'ls-tree', '-z', '-l', target.sha, '--', ...files]);
      return new Map(
        treeEntries(listing, target.sha)
          .filter((e) => files.includes(e.path))
          .map((e) => [e.path, e]),
      );
    });
  }

  /**
   * The content of a file `listFiles` found at `commit`. A directory, symlink or submodule, or a
   * file larger than `maxFileBytes`, is an error (`not-a-regular-file`), so a symlink can never
   * make the operator read a file of its own.
   */
  async readEntry(commit: CommitLocation, entry: TreeEntry): Promise<string> {
    const target = this.validate(commit);
    requireRegularFile(entry, target.sha, this.maxFileBytes);
    // Outside the lock: reading an object the commit pins is safe beside another SHA's fetch.
    const content = await this.git.run(target.bareDir, ['cat-file', 'blob', entry.object]);
    // The tree gave the size: a shorter answer (of valid UTF-8) is a failed read, worth a retry, never the file.
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes < entry.size && !content.includes('\uFFFD')) {
      throw new GitOperationError(
        'git-failed',
        `reading ${entry.path} at ${target.sha.slice(0, 12)} gave ${bytes} bytes, the commit says ${entry.size}`,
      );
    }
    return content;
  }

  /** The content of `filePath` at `commit` (`listFiles` + `readEntry`), or undefined when there is no such path. */
  readFile(commit: CommitLocation, filePath: string): Promise<string | undefined> {
    return readOneFile(this, commit, filePath);
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

  /** Under the repository lock: the bare repository exists and holds the commit, pinned. */
  private async prepare(target: ValidCommit): Promise<void> {
    const pinned = await this.ensureBareRepository(target);
    if (pinned.includes(target.sha)) return;
    try {
      // --progress: the timeout counts silence, and a large healthy fetch is silent without it.
      await this.git.run(
        target.bareDir,
        [
          'fetch',
          '--depth=1',
          '--no-tags',
          '--no-write-fetch-head',
          '--progress',
          '--',
          target.url.href,
          `${target.sha}:${pinPrefix}${target.sha}`,
        ],
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
    pinned.push(target.sha);
    // Unpinned commits become garbage for git gc; the one just fetched is the newest and stays.
    while (pinned.length > this.maxCachedCommits) {
      await this.git.run(target.bareDir, ['update-ref', '-d', `${pinPrefix}${pinned[0]!}`]);
      pinned.shift();
    }
  }

  /** The repository's pinned SHAs, oldest first; on first use, also clears what an earlier process left. */
  private async ensureBareRepository(target: ValidCommit): Promise<string[]> {
    const known = this.pinned.get(target.key);
    if (known) return known;
    // Worktrees left by a previous process (crash, kill) are gone from disk after this.
    await rm(path.join(this.cacheDir, 'checkouts', target.key), { recursive: true, force: true });
    let pinned: string[] = [];
    if (existsSync(path.join(target.bareDir, 'HEAD'))) {
      await this.git.run(target.bareDir, ['worktree', 'prune']);
      const refs = await this.git.run(target.bareDir, ['for-each-ref', '--sort=committerdate', '--format=%(refname)', pinPrefix]);
      pinned = refs
        .split('\n')
        .filter((ref) => ref.startsWith(pinPrefix))
        .map((ref) => ref.slice(pinPrefix.length));
    } else {
      // A directory without HEAD is an init that never finished.
      await rm(target.bareDir, { recursive: true, force: true });
      await mkdir(target.bareDir, { recursive: true, mode: 0o700 });
      await this.git.run(target.bareDir, ['init', '--bare', '--quiet']);
    }
    // Over every .gitattributes of the repository's: a checkout writes each blob as it is. Its
    // attributes could make git write more than the tree counts (ident, an encoding of four bytes
    // a character, CRLF) or run a filter; the repository's code reads its files as committed.
    await mkdir(path.join(target.bareDir, 'info'), { recursive: true, mode: 0o700 });
    await writeFile(path.join(target.bareDir, 'info', 'attributes'), checkoutAttributes);
    this.pinned.set(target.key, pinned);
    return pinned;
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

/** The entries of a `git ls-tree -z -l` listing of `sha`. */
function treeEntries(listing: string, sha: string): TreeEntry[] {
  // Every entry ends with NUL: anything else is an answer cut short, worth a retry.
  if (listing !== '' && !listing.endsWith('\0')) {
    throw new GitOperationError('git-failed', `the listing of ${sha.slice(0, 12)} ended mid-entry`);
  }
  return listing
    .split('\0')
    .filter((line) => line.includes('\t'))
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, object, size] = line.slice(0, tab).split(/\s+/) as [string, string, string, string];
      return { path: line.slice(tab + 1), kind: entryKind(mode, type), object, size: Number(size) || 0 };
    });
}

function entryKind(mode: string, type: string): TreeEntry['kind'] {
  if (type === 'tree') return 'directory';
  if (type === 'commit') return 'submodule';
  return mode === '120000' ? 'symlink' : 'file';
}

/** Throws `not-a-regular-file` unless `entry` is a regular file of at most `maxBytes`. */
export function requireRegularFile(entry: TreeEntry, sha: string, maxBytes = Number.POSITIVE_INFINITY): void {
  const at = `${entry.path} at ${sha.slice(0, 12)}`;
  if (entry.kind !== 'file') {
    const kind = { directory: 'a directory', symlink: 'a symbolic link', submodule: 'a submodule' }[entry.kind];
    throw new GitOperationError('not-a-regular-file', `${at} is ${kind}, not a regular file`);
  }
  if (entry.size > maxBytes) {
    throw new GitOperationError('not-a-regular-file', `${at} is ${entry.size} bytes, more than the ${maxBytes} allowed`);
  }
}
