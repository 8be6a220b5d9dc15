// `.preview/` of a commit read through GitHub's REST API instead of a git checkout: one
// directory listing (`GET /repos/{owner}/{repo}/contents/.preview?ref=<sha>`) and one blob per
// file read (`GET …/git/blobs/{sha}`), as Probot's `context.config()` reads its configuration.
// No process is forked and nothing is fetched: a new SHA costs two requests, and one when its
// preview.yaml is a blob read before (most pushes leave it unchanged).
//
// Both answers are immutable — a listing is pinned by the commit SHA, a blob by its own — so
// they are kept (bounded, least recently used dropped) and never asked for again, and workers
// asking for the same one while it loads share one request. A branch is looked up each time
// (`GET …/git/ref/heads/{branch}`): Octokit's ETag cache makes an unchanged answer a free 304.
//
// GitHub answers 404 alike for a directory that is not there, a commit that is not, and a
// repository the credentials cannot see; one more request (`GET …/commits/{sha}`, asked for
// the bare SHA only) tells them apart. Failures are the git layer's GitOperationErrors, so the
// renderer maps both sources the same way.
import { GitOperationError, InvalidGitInputError } from '../git/git-errors.js';
import { readOneFile, type PreviewFileSource } from '../git/preview-files.js';
import { requireRegularFile, type CommitLocation, type RepositoryLocation, type TreeEntry } from '../git/repository-cache.js';
import { validateBranch, validateOwner, validateRepo, validateRepositoryPath, validateSha } from '../git/repository-coordinates.js';
import type { GitHubClient, GitHubClients } from './octokit-factory.js';
import { LruMemo } from './preview-files-api-memo.js';
import { gitHubApiFailure, httpStatus } from './preview-files-api-errors.js';

export interface GitHubPreviewFilesOptions {
  /** The operator's GitHub clients: each repository is read as the App installation that covers it (or with the token). */
  clients: Pick<GitHubClients, 'forRepository'>;
}

/** Largest file read (1 MiB, as the git source's default). */
const maxFileBytes = 1024 * 1024;
/** Directory listings kept, counted by their entries (an empty one weighs 1). */
const maxCachedListingEntries = 20_000;
/** File contents kept, in characters (at most 1,000 files). */
const maxCachedBlobChars = 8 * 1024 * 1024;

/** A directory at a commit: its entries by repository path. */
type Listing = ReadonlyMap<string, TreeEntry>;

/** One item of GitHub's directory listing (the fields used here). */
interface ContentItem {
  type: string;
  name: string;
  sha: string;
  size: number;
  download_url: string | null;
}

const blobIdPattern = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export class GitHubPreviewFiles implements PreviewFileSource {
  private readonly clients: GitHubPreviewFilesOptions['clients'];
  private readonly listings: LruMemo<Listing>;
  private readonly blobs: LruMemo<string>;

  constructor(options: GitHubPreviewFilesOptions) {
    this.clients = options.clients;
    this.listings = new LruMemo({ maxEntries: 10_000, maxWeight: maxCachedListingEntries, weigh: (listing) => Math.max(1, listing.size) });
    this.blobs = new LruMemo({ maxEntries: 1_000, maxWeight: maxCachedBlobChars, weigh: (text) => text.length });
  }

  /**
   * One listing per directory of `paths` (`.preview/` for the renderer's two files). Paths
   * must be inside a directory: the repository root is not listed.
   */
  async listFiles(commit: CommitLocation, paths: readonly string[]): Promise<Map<string, TreeEntry>> {
    const target = validCommit(commit);
    const files = paths.map(validateRepositoryPath);
    const directories = [...new Set(files.map(directoryOf))];
    const listings = new Map(await Promise.all(directories.map(async (dir) => [dir, await this.listing(target, dir)] as const)));
    const found = new Map<string, TreeEntry>();
    for (const file of files) {
      const entry = listings.get(directoryOf(file))!.get(file);
      if (entry) found.set(file, entry);
    }
    return found;
  }

  async readEntry(commit: CommitLocation, entry: TreeEntry): Promise<string> {
    const target = validCommit(commit);
    requireRegularFile(entry, target.sha, maxFileBytes);
    const blob = entry.object.toLowerCase();
    if (!blobIdPattern.test(blob))
      throw new InvalidGitInputError('sha', entry.object, 'expected a full blob id (40 or 64 hexadecimal digits)');
    // Keyed by the blob alone: its id is its content, whichever commit or repository listed it.
    return this.blobs.get(blob, () => this.fetchBlob(target, entry, blob));
  }

  readFile(commit: CommitLocation, filePath: string): Promise<string | undefined> {
    return readOneFile(this, commit, filePath);
  }

  async resolveBranch(repository: RepositoryLocation, branch: string): Promise<string> {
    const target = { owner: validateOwner(repository.owner), repo: validateRepo(repository.repo) };
    const name = validateBranch(branch);
    const what = `resolving the branch ${name}`;
    const octokit = await this.client(target, what);
    let sha: string;
    try {
      ({
        data: {
          object: { sha },
        },
      } = await octokit.rest.git.getRef({ owner: target.owner, repo: target.repo, ref: `heads/${name}` }));
    } catch (err) {
      if (httpStatus(err) === 404) {
        throw new GitOperationError(
          'branch-not-found',
          `branch ${name} does not exist in ${target.owner}/${target.repo}, or the repository is not visible to the operator's GitHub credentials (GitHub API: 404)`,
          (err as Error).message,
        );
      }
      throw gitHubApiFailure(err, what, fullName(target));
    }
    return validateSha(sha);
  }

  private listing(target: ValidCommit, dir: string): Promise<Listing> {
    // GitHub names are case-insensitive: one entry per repository whatever the spelling.
    const key = `${fullName(target).toLowerCase()}@${target.sha}:${dir}`;
    return this.listings.get(key, () => this.fetchListing(target, dir));
  }

  private async fetchListing(target: ValidCommit, dir: string): Promise<Listing> {
    const what = `listing ${dir}/ at ${target.sha.slice(0, 12)}`;
    const octokit = await this.client(target, what);
    let data: unknown;
    try {
      ({ data } = await octokit.rest.repos.getContent({ owner: target.owner, repo: target.repo, path: dir, ref: target.sha }));
    } catch (err) {
      const status = httpStatus(err);
      if (status !== 404 && status !== 422) throw gitHubApiFailure(err, what, fullName(target));
      await this.requireCommit(octokit, target);
      return new Map();
    }
    // A file, symlink or submodule where the directory was expected: nothing is inside it (as with git).
    if (!Array.isArray(data)) return new Map();
    const entries = new Map<string, TreeEntry>();
    for (const item of data as ContentItem[]) {
      const entry = treeEntry(dir, item);
      entries.set(entry.path, entry);
    }
    return entries;
  }

  /** After a 404: returns when the commit exists (so the path does not), else throws what is missing. */
  private async requireCommit(octokit: GitHubClient, target: ValidCommit): Promise<void> {
    try {
      // The bare SHA as the answer (a media type): the full commit would carry its diff.
      await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', {
        owner: target.owner,
        repo: target.repo,
        ref: target.sha,
        headers: { accept: 'application/vnd.github.sha' },
      });
    } catch (err) {
      // 422 "No commit found for SHA"; 409 for a repository without any commit.
      const status = httpStatus(err);
      if (status === 422 || status === 409) {
        throw new GitOperationError(
          'commit-not-found',
          `commit ${target.sha} is not in ${fullName(target)} (force-pushed away, or never pushed), says the GitHub API`,
          (err as Error).message,
        );
      }
      throw gitHubApiFailure(err, `looking up the commit ${target.sha.slice(0, 12)}`, fullName(target));
    }
  }

  private async fetchBlob(target: ValidCommit, entry: TreeEntry, blob: string): Promise<string> {
    const what = `reading ${entry.path} at ${target.sha.slice(0, 12)}`;
    const octokit = await this.client(target, what);
    let content: string;
    let encoding: string;
    try {
      ({
        data: { content, encoding },
      } = await octokit.rest.git.getBlob({ owner: target.owner, repo: target.repo, file_sha: blob }));
    } catch (err) {
      throw gitHubApiFailure(err, what, fullName(target));
    }
    if (encoding !== 'base64' && encoding !== 'utf-8') {
      throw new GitOperationError(
        'git-failed',
        `the GitHub API gave ${entry.path} at ${target.sha.slice(0, 12)} in the encoding "${encoding}"`,
      );
    }
    const bytes = Buffer.from(content, encoding === 'base64' ? 'base64' : 'utf8');
    // The listing gave the size: any other length is a broken answer, worth a retry, never the file.
    if (bytes.length !== entry.size) {
      throw new GitOperationError(
        'git-failed',
        `the GitHub API gave ${bytes.length} bytes ${what.replace(/^reading/, 'for')}, its listing says ${entry.size}`,
      );
    }
    return bytes.toString('utf8');
  }

  private async client(target: { owner: string; repo: string }, what: string): Promise<GitHubClient> {
    try {
      return await this.clients.forRepository({ owner: target.owner, name: target.repo });
    } catch (err) {
      // An App not installed on the repository: GitHub answers 404 to the installation lookup.
      throw gitHubApiFailure(err, what, fullName(target));
    }
  }
}

interface ValidCommit {
  owner: string;
  repo: string;
  sha: string;
}

function validCommit(commit: CommitLocation): ValidCommit {
  return { owner: validateOwner(commit.owner), repo: validateRepo(commit.repo), sha: validateSha(commit.sha) };
}

const fullName = (target: { owner: string; repo: string }) => `${target.owner}/${target.repo}`;

function directoryOf(file: string): string {
  const slash = file.lastIndexOf('/');
  if (slash < 0) {
    throw new InvalidGitInputError(
      'path',
      file,
      'the GitHub API source reads files inside a directory (such as .preview/), not at the repository root',
    );
  }
  return file.slice(0, slash);
}

function treeEntry(dir: string, item: ContentItem): TreeEntry {
  const path = `${dir}/${item.name}`;
  // GitHub lists a submodule as type "file" (for compatibility, its docs say), without a download URL.
  let kind: TreeEntry['kind'];
  if (item.type === 'dir') kind = 'directory';
  else if (item.type === 'symlink') kind = 'symlink';
  else if (item.type === 'file' && item.download_url !== null) kind = 'file';
  else kind = 'submodule';
  return { path, kind, object: item.sha, size: kind === 'file' || kind === 'symlink' ? item.size : 0 };
}
