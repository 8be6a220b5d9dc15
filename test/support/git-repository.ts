// A real "origin" repository for tests: a bare repository on disk, served over file://,
// shaped like a GitHub repository (branches plus refs/pull/<n>/head and refs/pull/<n>/merge).
// Commits are written with git plumbing straight into the bare repository, so no working
// clone is needed and every commit is reproducible (fixed identity, clock advancing one
// second per commit).
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** A file's new content, a symbolic link, or `null` to delete it. */
export type FileChange = string | Buffer | { symlinkTo: string } | null;
/** Changes by repository-relative path. */
export type FileChanges = Record<string, FileChange>;

export interface CreateGitRepositoryOptions {
  owner?: string;
  repo?: string;
  defaultBranch?: string;
  /** Files of the first commit on the default branch; without them the repository starts empty. */
  initialFiles?: FileChanges;
}

export interface OpenPullRequestOptions {
  /** Branch the PR targets (default: the default branch); the PR starts from its tip. */
  base?: string;
  /** For a same-repository PR: the head branch, kept in step with refs/pull/<n>/head. Omit for a fork. */
  headBranch?: string;
  files: FileChanges;
  message?: string;
  /** Also maintain refs/pull/<n>/merge (a real merge of head into base), as GitHub does. */
  withMergeRef?: boolean;
}

export interface GitRepository {
  /** Temp folder holding everything; removed by cleanup(). */
  readonly root: string;
  /** Path of the bare origin repository. */
  readonly originPath: string;
  /** file:// URL of the origin (a plain path would make git ignore --depth). */
  readonly cloneUrl: string;
  readonly owner: string;
  readonly repo: string;
  readonly defaultBranch: string;

  /** Commits `files` on top of `branch` (creating the branch if needed) and returns the new SHA. */
  commit(branch: string, files: FileChanges, message?: string): Promise<string>;
  /** Writes a commit on top of `parent` (or a root commit) without moving any ref; returns its SHA. */
  commitOnto(parent: string | undefined, files: FileChanges, message?: string): Promise<string>;
  /** Opens PR `number`: a commit on top of the base tip, published as refs/pull/<n>/head. Returns the head SHA. */
  openPullRequest(number: number, options: OpenPullRequestOptions): Promise<string>;
  /** Pushes a new commit onto PR `number` (its head branch too, if it has one); returns the new head SHA. */
  pushToPullRequest(number: number, files: FileChanges, message?: string): Promise<string>;
  /** Points refs/pull/<n>/head (and refs/pull/<n>/merge when `mergeSha` is given) at the given commits. */
  setPullRequestRefs(number: number, headSha: string, mergeSha?: string): Promise<void>;
  /** Recomputes refs/pull/<n>/merge as the merge of the PR head into `base`; returns its SHA. */
  updateMergeRef(number: number, base?: string): Promise<string>;
  /** Removes refs/pull/<n>/head and refs/pull/<n>/merge (and the head branch, if any). */
  deletePullRequestRefs(number: number): Promise<void>;
  /** Points any full ref name (`refs/heads/x`, `refs/pull/1/head`, …) at a commit. */
  setRef(ref: string, sha: string): Promise<void>;
  deleteRef(ref: string): Promise<void>;
  /** The SHA a full ref name points to, or undefined. */
  resolveRef(ref: string): Promise<string | undefined>;
  /** Every ref of the origin with its SHA. */
  listRefs(): Promise<Map<string, string>>;
  cleanup(): Promise<void>;
}

const identity = { name: 'Preview Test', email: 'preview-test@example.invalid' };
const firstCommitEpoch = 1_700_000_000;

interface PullRequestState {
  base: string;
  headBranch?: string;
  withMergeRef: boolean;
}

export async function createGitRepository(options: CreateGitRepositoryOptions = {}): Promise<GitRepository> {
  const owner = options.owner ?? 'octo-org';
  const repo = options.repo ?? 'preview-app';
  const defaultBranch = options.defaultBranch ?? 'main';
  const root = await mkdtemp(path.join(tmpdir(), 'preview-git-'));
  const originPath = path.join(root, owner, `${repo}.git`);
  await mkdir(originPath, { recursive: true });

  let clock = firstCommitEpoch;
  const pulls = new Map<number, PullRequestState>();

  // The host's global and system git configuration (identities, credential helpers,
  // init templates) must not leak into fixtures.
  const baseEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
  };

  function git(args: string[], { input, env }: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = execFile(
        'git',
        ['--git-dir', originPath, ...args],
        { env: { ...baseEnv, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`git ${args.join(' ')} failed: ${stderr.trim() || err.message}`));
          else resolve(stdout.trim());
        },
      );
      // A command that fails early closes its stdin; its exit status carries the real error.
      child.stdin!.on('error', () => {});
      child.stdin!.end(input ?? '');
    });
  }

  await git(['init', '--bare', '--quiet', `--initial-branch=${defaultBranch}`]);
  // Lets clients fetch any commit by SHA, as GitHub does (a fetch of refs/pull/<n>/head by SHA).
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true']);

  async function resolveRef(ref: string): Promise<string | undefined> {
    try {
      return await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    } catch {
      return undefined;
    }
  }

  async function commitOnto(parent: string | undefined, files: FileChanges, message = 'test commit'): Promise<string> {
    const indexFile = path.join(root, `index-${clock}-${Math.random().toString(16).slice(2)}`);
    const env = { GIT_INDEX_FILE: indexFile };
    try {
      if (parent) await git(['read-tree', parent], { env });
      else await git(['read-tree', '--empty'], { env });
      // Blobs are hashed in one git process (contents staged in temp files); one index update
      // then applies every change (mode 0 with the null id removes an entry).
      const staging = await mkdtemp(path.join(root, 'blobs-'));
      const changes: Array<{ file: string; mode: string; source?: string; blob?: string }> = [];
      try {
        let i = 0;
        for (const [file, content] of Object.entries(files)) {
          const normalised = path.posix.normalize(file);
          if (normalised.startsWith('../') || path.posix.isAbsolute(normalised))
            throw new Error(`file path escapes the repository: ${file}`);
          if (content === null) {
            changes.push({ file: normalised, mode: '0' });
            continue;
          }
          const source = path.join(staging, String(i++));
          const isLink = typeof content === 'object' && !Buffer.isBuffer(content);
          await writeFile(source, isLink ? content.symlinkTo : content);
          changes.push({ file: normalised, mode: isLink ? '120000' : '100644', source });
        }
        const toHash = changes.filter((c) => c.source);
        const blobs =
          toHash.length > 0
            ? (
                await git(['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: toHash.map((c) => `${c.source}\n`).join('') })
              ).split('\n')
            : [];
        toHash.forEach((change, n) => {
          change.blob = blobs[n];
        });
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
      const entries = changes.map((c) => `${c.mode} ${c.blob ?? '0'.repeat(40)}\t${c.file}\0`);
      if (entries.length > 0) await git(['update-index', '-z', '--index-info'], { env, input: entries.join('') });
      const tree = await git(['write-tree'], { env });
      clock += 1;
      const date = `${clock} +0000`;
      return await git(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message], {
        env: {
          ...env,
          GIT_AUTHOR_NAME: identity.name,
          GIT_AUTHOR_EMAIL: identity.email,
          GIT_AUTHOR_DATE: date,
          GIT_COMMITTER_NAME: identity.name,
          GIT_COMMITTER_EMAIL: identity.email,
          GIT_COMMITTER_DATE: date,
        },
      });
    } finally {
      await rm(indexFile, { force: true });
    }
  }

  async function setRef(ref: string, sha: string): Promise<void> {
    await git(['update-ref', ref, sha]);
  }

  async function deleteRef(ref: string): Promise<void> {
    if ((await resolveRef(ref)) !== undefined) await git(['update-ref', '-d', ref]);
  }

  async function commit(branch: string, files: FileChanges, message?: string): Promise<string> {
    const ref = `refs/heads/${branch}`;
    const sha = await commitOnto(await resolveRef(ref), files, message);
    await setRef(ref, sha);
    return sha;
  }

  async function updateMergeRef(number: number, base?: string): Promise<string> {
    const head = await resolveRef(`refs/pull/${number}/head`);
    if (!head) throw new Error(`PR #${number} has no head ref`);
    const baseBranch = base ?? pulls.get(number)?.base ?? defaultBranch;
    const baseSha = await resolveRef(`refs/heads/${baseBranch}`);
    if (!baseSha) throw new Error(`base branch ${baseBranch} does not exist`);
    let tree: string;
    try {
      tree = (await git(['merge-tree', '--write-tree', baseSha, head])).split('\n')[0]!;
    } catch (err) {
      throw new Error(`PR #${number} does not merge cleanly into ${baseBranch}: ${(err as Error).message}`, { cause: err });
    }
    clock += 1;
    const date = `${clock} +0000`;
    const merge = await git(['commit-tree', tree, '-p', baseSha, '-p', head, '-m', `Merge ${head} into ${baseSha}`], {
      env: {
        GIT_AUTHOR_NAME: identity.name,
        GIT_AUTHOR_EMAIL: identity.email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: identity.name,
        GIT_COMMITTER_EMAIL: identity.email,
        GIT_COMMITTER_DATE: date,
      },
    });
    await setRef(`refs/pull/${number}/merge`, merge);
    return merge;
  }

  async function openPullRequest(number: number, opts: OpenPullRequestOptions): Promise<string> {
    const base = opts.base ?? defaultBranch;
    const baseSha = await resolveRef(`refs/heads/${base}`);
    if (!baseSha) throw new Error(`base branch ${base} does not exist`);
    const head = await commitOnto(baseSha, opts.files, opts.message ?? `PR #${number}`);
    pulls.set(number, { base, headBranch: opts.headBranch, withMergeRef: opts.withMergeRef ?? false });
    if (opts.headBranch) await setRef(`refs/heads/${opts.headBranch}`, head);
    await setRef(`refs/pull/${number}/head`, head);
    if (opts.withMergeRef) await updateMergeRef(number, base);
    return head;
  }

  async function pushToPullRequest(number: number, files: FileChanges, message?: string): Promise<string> {
    const current = await resolveRef(`refs/pull/${number}/head`);
    if (!current) throw new Error(`PR #${number} has no head ref`);
    const head = await commitOnto(current, files, message ?? `push to PR #${number}`);
    const state = pulls.get(number);
    if (state?.headBranch) await setRef(`refs/heads/${state.headBranch}`, head);
    await setRef(`refs/pull/${number}/head`, head);
    if (state?.withMergeRef) await updateMergeRef(number);
    return head;
  }

  async function setPullRequestRefs(number: number, headSha: string, mergeSha?: string): Promise<void> {
    await setRef(`refs/pull/${number}/head`, headSha);
    if (mergeSha) await setRef(`refs/pull/${number}/merge`, mergeSha);
  }

  async function deletePullRequestRefs(number: number): Promise<void> {
    await deleteRef(`refs/pull/${number}/head`);
    await deleteRef(`refs/pull/${number}/merge`);
    const headBranch = pulls.get(number)?.headBranch;
    if (headBranch) await deleteRef(`refs/heads/${headBranch}`);
    pulls.delete(number);
  }

  async function listRefs(): Promise<Map<string, string>> {
    const out = await git(['for-each-ref', '--format=%(refname) %(objectname)']);
    return new Map(
      out
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [ref, sha] = line.split(' ');
          return [ref!, sha!] as const;
        }),
    );
  }

  if (options.initialFiles) await commit(defaultBranch, options.initialFiles, 'initial commit');

  return {
    root,
    originPath,
    cloneUrl: pathToFileURL(originPath).href,
    owner,
    repo,
    defaultBranch,
    commit,
    commitOnto,
    openPullRequest,
    pushToPullRequest,
    setPullRequestRefs,
    updateMergeRef,
    deletePullRequestRefs,
    setRef,
    deleteRef,
    resolveRef,
    listRefs,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

export interface GitHttpRequest {
  method: string;
  /** Path and query, e.g. `/octo-org/preview-app.git/info/refs?service=git-upload-pack`. */
  url: string;
  /** The Authorization header as received ('' when absent). */
  authorization: string;
}

export interface GitHttpServer {
  /** http://127.0.0.1:<port>/<owner>/<repo>.git */
  readonly cloneUrl: string;
  /** Every request received, in order. */
  readonly requests: readonly GitHttpRequest[];
  close(): Promise<void>;
}

export interface GitHttpServerOptions {
  /** Every request must carry HTTP Basic auth whose password is this token. */
  token?: string;
  /** Awaited before an authorised request is served: git waits for its answer meanwhile (to look at it while it runs). */
  beforeAnswer?: (request: GitHttpRequest) => Promise<void> | void;
}

/**
 * Serves the repository over git's smart HTTP protocol (`git http-backend` as a CGI program) on
 * 127.0.0.1. With `token`, every request must carry HTTP Basic auth whose password is that token
 * (as GitHub accepts installation tokens); others get 401.
 */
export async function serveGitOverHttp(
  repository: GitRepository,
  { token, beforeAnswer }: GitHttpServerOptions = {},
): Promise<GitHttpServer> {
  const backend = path.join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-http-backend');
  const requests: GitHttpRequest[] = [];

  function authorised(header: string): boolean {
    if (!token) return true;
    const match = /^basic\s+(.+)$/i.exec(header);
    if (!match) return false;
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    return decoded.slice(decoded.indexOf(':') + 1) === token;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const authorization = req.headers.authorization ?? '';
    const request = { method: req.method ?? '', url: req.url ?? '', authorization };
    requests.push(request);
    if (!authorised(authorization)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="GitHub"' }).end('Unauthorized');
      return;
    }
    try {
      await beforeAnswer?.(request);
    } catch {
      res.writeHead(500).end('beforeAnswer failed');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const cgi = spawn(backend, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: repository.root,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    cgi.on('close', () => {
      const out = Buffer.concat(chunks);
      const end = out.indexOf('\r\n\r\n');
      const headerText = out.subarray(0, end).toString('latin1');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of headerText.split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else if (name) headers[name] = value;
      }
      res.writeHead(status, headers).end(out.subarray(end + 4));
    });
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    cloneUrl: `http://127.0.0.1:${port}/${repository.owner}/${repository.repo}.git`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
