// What the PreviewEnvironment reconciler's unit tests hand it instead of git, GitHub and informers:
// `.preview/` files held in memory per commit (FakePreviewFiles: a RepositorySource that never
// checks anything out), and its informers over a FakeCluster (fake-cluster.ts), the environments'
// cache indexed by repository as the real informer is. Integration tests use the real parts.
import { previewEnvironmentKind } from '../../constructs/index.js';
import { GitOperationError } from '../../src/git/git-errors.js';
import type { CommitLocation, RepositoryLocation, TreeEntry } from '../../src/git/repository-cache.js';
import { repositoryKey } from '../../src/github/octokit-factory.js';
import {
  byEnvironment,
  guardCacheKinds,
  ingressKind,
  namespaceKind,
  repositoryIndex,
  type EnvironmentInformers,
} from '../../src/controllers/preview-environment-caches.js';
import type { RepositorySource } from '../../src/controllers/preview-environment-rendering.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment-status.js';
import type { FakeCluster } from './fake-cluster.js';

/** A repository's commits and branches, in memory. */
export class FakePreviewFiles implements RepositorySource {
  /** Every read, as `list <sha>`, `read <sha> <path>`, `branch <name>`. */
  readonly reads: string[] = [];
  private readonly commits = new Map<string, Map<string, string>>();
  private readonly branches = new Map<string, string>();

  /** `files` (path → text) at `sha` of the repository `owner/repo`. */
  commit(repository: { owner: string; repo: string }, sha: string, files: Record<string, string>): void {
    this.commits.set(commitKey(repository, sha), new Map(Object.entries(files)));
  }

  branch(repository: { owner: string; repo: string }, branch: string, sha: string): void {
    this.branches.set(`${repository.owner}/${repository.repo}#${branch}`, sha);
  }

  async listFiles(commit: CommitLocation, paths: readonly string[]): Promise<Map<string, TreeEntry>> {
    this.reads.push(`list ${commit.sha}`);
    const files = this.files(commit);
    const entries = paths.flatMap((path) => {
      const text = files.get(path);
      return text === undefined ? [] : [[path, { path, kind: 'file', object: `blob-${path}`, size: Buffer.byteLength(text) }] as const];
    });
    return new Map(entries);
  }

  async readEntry(commit: CommitLocation, entry: TreeEntry): Promise<string> {
    this.reads.push(`read ${commit.sha} ${entry.path}`);
    const text = this.files(commit).get(entry.path);
    if (text === undefined) throw new GitOperationError('not-a-regular-file', `${entry.path} is not a file at ${commit.sha}`);
    return text;
  }

  async readFile(commit: CommitLocation, path: string): Promise<string | undefined> {
    const entry = (await this.listFiles(commit, [path])).get(path);
    return entry && this.readEntry(commit, entry);
  }

  async resolveBranch(repository: RepositoryLocation, branch: string): Promise<string> {
    this.reads.push(`branch ${branch}`);
    const sha = this.branches.get(`${repository.owner}/${repository.repo}#${branch}`);
    if (!sha) throw new GitOperationError('branch-not-found', `no branch ${branch} in ${repository.owner}/${repository.repo}`);
    return sha;
  }

  async withCheckout<T>(commit: CommitLocation): Promise<T> {
    throw new Error(`unit tests check nothing out (${commit.sha}); a main.ts belongs in the integration tests`);
  }

  private files(commit: CommitLocation): Map<string, string> {
    const files = this.commits.get(commitKey(commit, commit.sha));
    if (!files) throw new GitOperationError('commit-not-found', `no commit ${commit.sha} in ${commit.owner}/${commit.repo}`);
    return files;
  }
}

function commitKey(repository: { owner: string; repo: string }, sha: string): string {
  return `${repository.owner}/${repository.repo}@${sha}`;
}

/** The reconciler's informers over `cluster`, with the kinds and selectors the wiring gives the real ones. */
export function fakeEnvironmentInformers(cluster: FakeCluster): EnvironmentInformers {
  const environments = cluster.informer(previewEnvironmentKind);
  const all = () => environments.list() as EnvironmentObject[];
  return {
    environments: {
      kind: environments.kind,
      get: (key) => environments.get(key) as EnvironmentObject | undefined,
      lookup: (key) => environments.lookup(key) as EnvironmentObject | 'absent',
      list: () => all(),
      byIndex: (index, value) => (index === repositoryIndex ? all().filter((e) => repositoryKey(e.spec.repository) === value) : []),
    },
    namespaces: cluster.informer(namespaceKind),
    algorithms: cluster.informer({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' }),
    databases: cluster.informer({ apiVersion: 'mycompany.com/v1', kind: 'Database' }),
    ingresses: cluster.informer(ingressKind, byEnvironment),
    guards: guardCacheKinds.map((kind) => cluster.informer(kind, byEnvironment)),
  };
}
