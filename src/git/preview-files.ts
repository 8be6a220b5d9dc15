// The port the renderer reads a commit's `.preview/` through. Two sources implement it: the
// git checkout cache (src/git/repository-cache.ts: a shallow fetch, then ls-tree and cat-file)
// and GitHub's REST API (src/github/preview-files-api.ts: a directory listing and a blob, no
// process at all). Both fail the same way — GitOperationError with the same reasons, and
// InvalidGitInputError for coordinates that cannot be right — so one mapping in the renderer
// tells what a user must fix from what is worth a retry.
import type { CommitLocation, RepositoryLocation, TreeEntry } from './repository-cache.js';
import { validateRepositoryPath } from './repository-coordinates.js';

export interface PreviewFileSource {
  /**
   * Which of `paths` exist at `commit` and what they are (file, directory, symlink,
   * submodule); absent paths are not in the map. A commit that does not exist is
   * `commit-not-found`, a repository that cannot be seen `repository-not-found`.
   */
  listFiles(commit: CommitLocation, paths: readonly string[]): Promise<Map<string, TreeEntry>>;
  /**
   * The UTF-8 text of an entry `listFiles` returned. Anything but a regular file, or a file
   * larger than the source's limit (1 MiB by default), is `not-a-regular-file`.
   */
  readEntry(commit: CommitLocation, entry: TreeEntry): Promise<string>;
  /** The SHA a branch points to right now, to pin a moving branch to one commit (`branch-not-found` when absent). */
  resolveBranch(repository: RepositoryLocation, branch: string): Promise<string>;
  /** `listFiles` + `readEntry` of one path; undefined when there is no such path. */
  readFile(commit: CommitLocation, path: string): Promise<string | undefined>;
}

/** `readFile` for every source: the path checked, listed, then read. */
export async function readOneFile(
  source: Pick<PreviewFileSource, 'listFiles' | 'readEntry'>,
  commit: CommitLocation,
  filePath: string,
): Promise<string | undefined> {
  const file = validateRepositoryPath(filePath);
  const entry = (await source.listFiles(commit, [file])).get(file);
  return entry && source.readEntry(commit, entry);
}
