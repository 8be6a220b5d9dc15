// Repository contents as GitHub's REST API serves them, answered from the repository's real
// git data (`gh.attachGitRepository`, read through one `git cat-file --batch-command`):
//   GET /repos/{owner}/{repo}/contents/{path}?ref=   a directory listing, a file (base64), a symlink, a submodule
//   GET /repos/{owner}/{repo}/git/blobs/{file_sha}   a blob (base64)
//   GET /repos/{owner}/{repo}/commits/{ref}           a commit (JSON, or the bare SHA: application/vnd.github.sha)
//   GET /repos/{owner}/{repo}/git/ref/{ref}           a ref (branches from git; from the emulator's state without git)
// With GitHub's quirks: a listing shows a submodule as type "file" (without a download URL),
// an unknown ref is 404 "No commit found for the ref" on contents and 422 on commits, a file
// over 1 MB is 403 `too_large` on contents (the blob endpoint still serves it), and a symlink
// to a file in the repository answers with that file.
import path from 'node:path';
import type { RouteContext } from './emulator.js';
import type { GitObjectReader, GitTreeItem } from './git-objects.js';
import { error, notFound, type Reply } from './replies.js';
import { nodeId } from './representations.js';
import type { RouteHandler } from './routes.js';

/** The contents API serves files up to this size (larger: the raw media type or the blob endpoint). */
const contentsMaxBytes = 1024 * 1024;
const treeMode = '40000';
const submoduleMode = '160000';
const symlinkMode = '120000';

/** GitHub's base64: lines of 60 characters, each ending in a line feed. */
function base64Lines(data: Buffer): string {
  const encoded = data.toString('base64');
  let out = '';
  for (let i = 0; i < encoded.length; i += 60) out += `${encoded.slice(i, i + 60)}\n`;
  return out;
}

/** A ref name as GitHub takes it in a URL: never revision syntax git would evaluate. */
function plainRef(ref: string): boolean {
  return /^[A-Za-z0-9._/-]+$/.test(ref) && !ref.startsWith('-') && !ref.includes('..') && !ref.startsWith('/');
}

/** The commit a ref (SHA, branch, tag) names, or undefined. */
async function resolveCommit(git: GitObjectReader, ref: string): Promise<string | undefined> {
  if (!plainRef(ref)) return undefined;
  return (await git.info(`${ref}^{commit}`))?.oid;
}

/** The tree entry at `file` in a commit (the root tree for ''), or undefined. */
async function lookUp(git: GitObjectReader, commitOid: string, file: string): Promise<GitTreeItem | undefined> {
  const commit = await git.commit(commitOid);
  if (!commit) return undefined;
  let current: GitTreeItem = { mode: treeMode, name: '', oid: commit.tree };
  for (const segment of file.split('/').filter(Boolean)) {
    if (current.mode !== treeMode) return undefined;
    const next = (await git.tree(current.oid))?.find((item) => item.name === segment);
    if (!next) return undefined;
    current = next;
  }
  return current;
}

function withGit(handler: (ctx: RouteContext, git: GitObjectReader) => Promise<Reply>): RouteHandler {
  return (ctx) => {
    const git = ctx.gh.gitObjects(ctx.repo);
    if (git) return handler(ctx, git);
    ctx.gh.recordViolation({
      kind: 'unimplemented',
      method: ctx.op.method,
      path: ctx.selfUrl,
      operationId: ctx.op.operationId,
      message: `${ctx.repo.fullName} has no git data in the emulator: call gh.attachGitRepository(…) (PullRequestDriver.create does)`,
    });
    return notFound();
  };
}

interface Where {
  ctx: RouteContext;
  /** The ref as asked for (or the default branch): GitHub builds its URLs with it. */
  ref: string;
}

function contentUrls({ ctx, ref }: Where, file: string, kind: 'blob' | 'tree', oid: string) {
  const full = ctx.repo.fullName;
  const encoded = file.split('/').map(encodeURIComponent).join('/');
  const self = `${ctx.urls.api}/repos/${full}/contents/${encoded}?ref=${encodeURIComponent(ref)}`;
  const git = `${ctx.urls.api}/repos/${full}/git/${kind === 'blob' ? 'blobs' : 'trees'}/${oid}`;
  const html = `${ctx.urls.web}/${full}/${kind}/${encodeURIComponent(ref)}/${encoded}`;
  return { url: self, git_url: git, html_url: html, _links: { self, git, html } };
}

async function listingItem(git: GitObjectReader, where: Where, dir: string, item: GitTreeItem) {
  const file = dir ? `${dir}/${item.name}` : item.name;
  if (item.mode === submoduleMode) {
    // GitHub's compatibility quirk: type "file"; the submodule's repository is not on this host.
    const self = contentUrls(where, file, 'tree', item.oid).url;
    return {
      type: 'file',
      size: 0,
      name: item.name,
      path: file,
      sha: item.oid,
      url: self,
      git_url: null,
      html_url: null,
      download_url: null,
      _links: { self, git: null, html: null },
    };
  }
  if (item.mode === treeMode) {
    return {
      type: 'dir',
      size: 0,
      name: item.name,
      path: file,
      sha: item.oid,
      ...contentUrls(where, file, 'tree', item.oid),
      download_url: null,
    };
  }
  const size = (await git.info(item.oid))?.size ?? 0;
  return {
    type: item.mode === symlinkMode ? 'symlink' : 'file',
    size,
    name: item.name,
    path: file,
    sha: item.oid,
    ...contentUrls(where, file, 'blob', item.oid),
    download_url: downloadUrl(where, file),
  };
}

function downloadUrl({ ctx, ref }: Where, file: string): string {
  return `${ctx.urls.web}/raw/${ctx.repo.fullName}/${encodeURIComponent(ref)}/${file.split('/').map(encodeURIComponent).join('/')}`;
}

async function fileReply(git: GitObjectReader, where: Where, file: string, oid: string): Promise<Reply> {
  const blob = await git.read(oid);
  if (!blob) return notFound();
  if (blob.size > contentsMaxBytes) {
    return error(
      403,
      'This API returns blobs up to 1 MB in size. The requested blob is too large to fetch via the API, but you can use the Git Data API to request blobs up to 100 MB in size.',
      {
        errors: [{ resource: 'Blob', field: 'data', code: 'too_large' }],
      },
    );
  }
  return {
    status: 200,
    body: {
      type: 'file',
      encoding: 'base64',
      size: blob.size,
      name: path.posix.basename(file),
      path: file,
      content: base64Lines(blob.data),
      sha: oid,
      ...contentUrls(where, file, 'blob', oid),
      download_url: downloadUrl(where, file),
    },
  };
}

/** The `.gitmodules` URL of a submodule at `file`, if the commit declares one. */
async function submoduleUrl(git: GitObjectReader, commitOid: string, file: string): Promise<string | undefined> {
  const modules = await lookUp(git, commitOid, '.gitmodules');
  if (!modules) return undefined;
  const text = (await git.read(modules.oid))?.data.toString('utf8') ?? '';
  for (const section of text.split(/^\s*\[/m)) {
    if (new RegExp(`^\\s*path\\s*=\\s*${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm').test(section)) {
      return /^\s*url\s*=\s*(\S+)\s*$/m.exec(section)?.[1];
    }
  }
  return undefined;
}

const getContent = withGit(async (ctx, git) => {
  const ref = ctx.query.get('ref') ?? ctx.repo.defaultBranch;
  const file = (ctx.params.path ?? '').replace(/^\/+|\/+$/g, '');
  const commit = await resolveCommit(git, ref);
  if (!commit) return error(404, `No commit found for the ref ${ref}`);
  const found = await lookUp(git, commit, file);
  if (!found) return notFound();
  const where: Where = { ctx, ref };
  if (found.mode === treeMode) {
    const items = (await git.tree(found.oid)) ?? [];
    return { status: 200, body: await Promise.all(items.map((item) => listingItem(git, where, file, item))) };
  }
  if (found.mode === submoduleMode) {
    const self = contentUrls(where, file, 'tree', found.oid).url;
    return {
      status: 200,
      body: {
        type: 'submodule',
        submodule_git_url:
          (await submoduleUrl(git, commit, file)) ?? `git://${new URL(ctx.urls.web).host}/unknown/${path.posix.basename(file)}.git`,
        size: 0,
        name: path.posix.basename(file),
        path: file,
        sha: found.oid,
        url: self,
        git_url: null,
        html_url: null,
        download_url: null,
        _links: { self, git: null, html: null },
      },
    };
  }
  if (found.mode === symlinkMode) {
    const target = (await git.read(found.oid))?.data.toString('utf8') ?? '';
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
    const inside = !path.posix.isAbsolute(target) && !resolved.startsWith('../') && resolved !== '..';
    const pointee = inside ? await lookUp(git, commit, resolved) : undefined;
    if (pointee && pointee.mode !== treeMode && pointee.mode !== submoduleMode && pointee.mode !== symlinkMode) {
      return fileReply(git, where, resolved, pointee.oid);
    }
    const size = (await git.info(found.oid))?.size ?? 0;
    return {
      status: 200,
      body: {
        type: 'symlink',
        target,
        size,
        name: path.posix.basename(file),
        path: file,
        sha: found.oid,
        ...contentUrls(where, file, 'blob', found.oid),
        download_url: downloadUrl(where, file),
      },
    };
  }
  return fileReply(git, where, file, found.oid);
});

const getBlob = withGit(async (ctx, git) => {
  const sha = ctx.params.file_sha!.toLowerCase();
  if (!/^[0-9a-f]{40}$/.test(sha)) return error(422, 'The sha parameter must be exactly 40 characters and contain only [0-9a-f].');
  const blob = await git.read(sha);
  if (!blob || blob.type !== 'blob') return notFound();
  return {
    status: 200,
    body: {
      sha,
      node_id: nodeId('Blob', `${ctx.repo.id}:${sha}`),
      size: blob.size,
      url: `${ctx.urls.api}/repos/${ctx.repo.fullName}/git/blobs/${sha}`,
      content: base64Lines(blob.data),
      encoding: 'base64',
    },
  };
});

/** Whether the client asked for the bare SHA (`application/vnd.github.sha`, or its v3 spelling). */
const wantsSha = (accept: string | undefined) => /application\/vnd\.github(?:\.v3)?\.sha\b/.test(accept ?? '');

const getCommit = withGit(async (ctx, git) => {
  const ref = ctx.params.ref!;
  const oid = await resolveCommit(git, ref);
  if (!oid) return error(422, `No commit found for SHA: ${ref}`);
  if (wantsSha(ctx.accept)) return { status: 200, body: oid, mediaType: 'application/vnd.github.sha' };
  const commit = (await git.commit(oid))!;
  const api = `${ctx.urls.api}/repos/${ctx.repo.fullName}`;
  const html = `${ctx.urls.web}/${ctx.repo.fullName}`;
  // `files` and `stats` are optional in the description and left out: nothing here reads a diff.
  return {
    status: 200,
    body: {
      url: `${api}/commits/${oid}`,
      sha: oid,
      node_id: nodeId('Commit', `${ctx.repo.id}:${oid}`),
      html_url: `${html}/commit/${oid}`,
      comments_url: `${api}/commits/${oid}/comments`,
      commit: {
        url: `${api}/git/commits/${oid}`,
        author: commit.author,
        committer: commit.committer,
        message: commit.message.replace(/\n$/, ''),
        comment_count: 0,
        tree: { sha: commit.tree, url: `${api}/git/trees/${commit.tree}` },
        verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
      },
      // The commit's emails belong to no account of the emulator.
      author: null,
      committer: null,
      parents: commit.parents.map((sha) => ({ sha, url: `${api}/commits/${sha}`, html_url: `${html}/commit/${sha}` })),
    },
  };
});

const getRef: RouteHandler = async (ctx) => {
  const ref = ctx.params.ref!;
  if (!plainRef(ref)) return notFound();
  const git = ctx.gh.gitObjects(ctx.repo);
  let object: { type: string; sha: string } | undefined;
  if (git) {
    // The full name, which git looks up as given before any of its shortcuts.
    const info = await git.info(`refs/${ref}`);
    object = info && { type: info.type, sha: info.oid };
  } else if (ref.startsWith('heads/')) {
    const sha = ctx.repo.branches.get(ref.slice('heads/'.length));
    object = sha === undefined ? undefined : { type: 'commit', sha };
  }
  if (!object) return notFound();
  const api = `${ctx.urls.api}/repos/${ctx.repo.fullName}`;
  return {
    status: 200,
    body: {
      ref: `refs/${ref}`,
      node_id: nodeId('Ref', `${ctx.repo.id}:refs/${ref}`),
      url: `${api}/git/refs/${ref}`,
      object: { ...object, url: `${api}/git/${object.type}s/${object.sha}` },
    },
  };
};

export const repositoryContentRoutes: Record<string, RouteHandler> = {
  'repos/get-content': getContent,
  'git/get-blob': getBlob,
  'repos/get-commit': getCommit,
  'git/get-ref': getRef,
};
