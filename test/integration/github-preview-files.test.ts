// `.preview/` through GitHub's REST API (src/github/preview-files-api.ts) against the emulator,
// which answers from a real git repository: what a listing and a read return, what they cost
// in requests (a SHA or a blob read once is never asked for again; concurrent askers share one
// request), and how every failure comes out — the git layer's reasons, so the renderer maps
// both sources alike. Every test also fails on a request that breaks GitHub's description.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GitOperationError, type GitFailureReason } from '../../src/git/git-errors.js';
import type { CommitLocation } from '../../src/git/repository-cache.js';
import { configPath, mainPath } from '../../src/controllers/preview-environment-rendering.js';
import { createGitHubClients, type GitHubClients } from '../../src/github/octokit-factory.js';
import { GitHubPreviewFiles } from '../../src/github/preview-files-api.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { bareGit, commitWithPreviewGitlink } from '../support/git-plumbing.js';
import { previewYaml } from '../support/preview-yaml.js';

const gh = await startTestEmulator();

let repo: PullRequestDriver;
let clients: GitHubClients;

/** Clients as the operator makes them, without retries: a fault must reach the source. */
function tokenClients(token = gh.createToken('preview-reader')): GitHubClients {
  return createGitHubClients({ auth: { type: 'token', token }, baseUrl: gh.url, throttle: { enabled: false }, retry: { enabled: false } });
}

before(async () => {
  repo = await PullRequestDriver.create(gh, { owner: 'files', initialFiles: { [configPath]: previewYaml(), 'README.md': 'readme\n' } });
  clients = tokenClients();
});
after(() => repo?.cleanup());

const at = (sha: string, driver = repo): CommitLocation => ({
  owner: driver.repository.owner,
  repo: driver.repository.name,
  cloneUrl: driver.cloneUrl,
  sha,
});
const blobId = (sha: string, file: string) => bareGit(repo.git.originPath)(['rev-parse', `${sha}:${file}`]);
/** The requests this file's repository received since `mark`, as `operationId status`. */
const requests = (mark: number, driver = repo) =>
  gh.requestsSince(mark, { repository: driver.repository }).map((r) => `${r.operationId} ${r.status}`);

async function failure(promise: Promise<unknown>): Promise<GitOperationError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof GitOperationError, `expected a GitOperationError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a failure');
}

async function failsWith(promise: Promise<unknown>, reason: GitFailureReason, message: RegExp): Promise<void> {
  const err = await failure(promise);
  assert.equal(err.reason, reason, err.message);
  assert.match(err.message, message);
}

describe('listing and reading', () => {
  it('lists .preview/ at the head SHA with one request and reads the file with one more', async () => {
    const { pullRequest } = await repo.open({ files: { [mainPath]: 'export default () => {};\n' } });
    const sha = pullRequest.head.sha;
    const source = new GitHubPreviewFiles({ clients });
    const mark = gh.mark();
    const files = await source.listFiles(at(sha), [configPath, mainPath, '.preview/absent.yaml']);
    assert.deepEqual([...files.keys()].sort(), [mainPath, configPath]);
    assert.deepEqual(files.get(configPath), {
      path: configPath,
      kind: 'file',
      object: blobId(sha, configPath),
      size: Buffer.byteLength(previewYaml()),
    });
    assert.equal(await source.readEntry(at(sha), files.get(configPath)!), previewYaml());
    assert.equal(await source.readFile(at(sha), mainPath), 'export default () => {};\n');
    assert.deepEqual(requests(mark), ['repos/get-content 200', 'git/get-blob 200', 'git/get-blob 200']);
  });

  it('a SHA listed and a blob read before cost nothing again; a new commit with the same preview.yaml costs one listing', async () => {
    const { pullRequest } = await repo.open({ files: { 'app.txt': 'v1\n' } });
    const source = new GitHubPreviewFiles({ clients });
    const first = pullRequest.head.sha;
    await source.readFile(at(first), configPath);

    let mark = gh.mark();
    assert.equal(await source.readFile(at(first), configPath), previewYaml());
    await source.listFiles(at(first), [configPath, mainPath]);
    assert.deepEqual(requests(mark), [], 'the same SHA again');

    const second = (await repo.push(pullRequest.number, { 'app.txt': 'v2\n' })).pullRequest.head.sha;
    mark = gh.mark();
    assert.equal(await source.readFile(at(second), configPath), previewYaml());
    assert.deepEqual(requests(mark), ['repos/get-content 200'], 'the same preview.yaml blob is not read again');
  });

  it('workers asking for the same new SHA at once share one listing and one blob request', async () => {
    const { pullRequest } = await repo.open({ files: { [configPath]: previewYaml({ image: 'registry.example.com/team/api:2.0' }) } });
    const source = new GitHubPreviewFiles({ clients });
    gh.faults.inject({ route: 'repos/get-content', repository: repo.repository, fault: { kind: 'delay', ms: 200 } });
    const mark = gh.mark();
    const texts = await Promise.all(Array.from({ length: 20 }, () => source.readFile(at(pullRequest.head.sha), configPath)));
    assert.ok(texts.every((t) => t === previewYaml({ image: 'registry.example.com/team/api:2.0' })));
    assert.deepEqual(requests(mark), ['repos/get-content 200', 'git/get-blob 200']);
  });

  it('a commit without .preview/ is an empty listing (ConfigMissing for the renderer), told apart from a missing commit with one request', async () => {
    const { pullRequest } = await repo.open({ files: { [configPath]: null } });
    const source = new GitHubPreviewFiles({ clients });
    const mark = gh.mark();
    assert.deepEqual(await source.listFiles(at(pullRequest.head.sha), [configPath, mainPath]), new Map());
    assert.equal(await source.readFile(at(pullRequest.head.sha), configPath), undefined);
    assert.deepEqual(requests(mark), ['repos/get-content 404', 'repos/get-commit 200'], 'kept: the second look costs nothing');
  });

  it('resolves the base branch to its SHA now, and follows it when it moves', async () => {
    const source = new GitHubPreviewFiles({ clients });
    const location = { owner: repo.repository.owner, repo: repo.repository.name, cloneUrl: repo.cloneUrl };
    const before = await source.resolveBranch(location, 'main');
    assert.equal(before, await repo.git.resolveRef('refs/heads/main'));
    assert.equal(await source.readFile(at(before), configPath), previewYaml());
    const moved = await repo.git.commit('main', { [configPath]: previewYaml({ database: false }) });
    assert.equal(await source.resolveBranch(location, 'main'), moved);
    assert.equal(await source.readFile(at(moved), configPath), previewYaml({ database: false }));
    await failsWith(
      source.resolveBranch(location, 'no-such-branch'),
      'branch-not-found',
      /branch no-such-branch does not exist in .*GitHub API/,
    );
    // Later pull requests start from main: its configuration back as it was.
    await repo.git.commit('main', { [configPath]: previewYaml() });
  });
});

describe('what cannot be read', () => {
  it('an unknown commit is commit-not-found', async () => {
    const source = new GitHubPreviewFiles({ clients });
    const mark = gh.mark();
    await failsWith(source.listFiles(at('d'.repeat(40)), [configPath]), 'commit-not-found', /commit d{40} is not in files\/.*GitHub API/);
    assert.deepEqual(requests(mark), ['repos/get-content 404', 'repos/get-commit 422']);
  });

  it('an unknown repository, or one the App is not installed on, is repository-not-found', async () => {
    const source = new GitHubPreviewFiles({ clients });
    await failsWith(
      source.listFiles({ ...at('a'.repeat(40)), repo: 'does-not-exist' }, [configPath]),
      'repository-not-found',
      /files\/does-not-exist does not exist or is not visible .*GitHub API/,
    );

    const app = gh.createApp();
    const other = await PullRequestDriver.create(gh, { owner: 'files', initialFiles: { [configPath]: previewYaml() } });
    try {
      gh.installApp(app.id, [other.repository]);
      const appClients = createGitHubClients({
        auth: { type: 'app', appId: app.id, privateKey: app.privateKey },
        baseUrl: gh.url,
        throttle: { enabled: false },
        retry: { enabled: false },
      });
      const asApp = new GitHubPreviewFiles({ clients: appClients });
      const main = (await other.git.resolveRef('refs/heads/main'))!;
      assert.equal(await asApp.readFile(at(main, other), configPath), previewYaml(), 'the installed repository reads');
      await failsWith(asApp.listFiles(at(main), [configPath]), 'repository-not-found', /not visible to the operator's GitHub credentials/);
    } finally {
      await other.cleanup();
    }
  });

  it('refused credentials are authentication', async () => {
    const source = new GitHubPreviewFiles({ clients: tokenClients('ghp_not_a_token') });
    await failsWith(source.listFiles(at('a'.repeat(40)), [configPath]), 'authentication', /GitHub API refused the operator's credentials/);
  });

  it('a 5xx, a network failure and a rate limit are transient (reasons the renderer does not map), and are not kept', async () => {
    const { pullRequest } = await repo.open({ files: { 'b.txt': 'b\n' } });
    const source = new GitHubPreviewFiles({ clients });
    gh.faults.inject({ route: 'repos/get-content', repository: repo.repository, fault: { kind: 'server-error', status: 502 } });
    await failsWith(
      source.listFiles(at(pullRequest.head.sha), [configPath]),
      'git-failed',
      /GitHub API answered 502 while listing \.preview\/ at/,
    );
    assert.equal(await source.readFile(at(pullRequest.head.sha), configPath), previewYaml(), 'the next attempt asks again');

    gh.faults.inject({ route: 'git/get-blob', repository: repo.repository, fault: { kind: 'server-error', status: 503 } });
    const fresh = new GitHubPreviewFiles({ clients });
    await failsWith(
      fresh.readFile(at(pullRequest.head.sha), configPath),
      'git-failed',
      /GitHub API answered 503 while reading \.preview\/preview\.yaml/,
    );

    // A client of its own: after a 429 the emulator holds the credential to its retry-after.
    const limited = new GitHubPreviewFiles({ clients: tokenClients(gh.createToken('limited-reader')) });
    gh.faults.inject({
      route: 'repos/get-content',
      repository: repo.repository,
      fault: { kind: 'too-many-requests', retryAfterSeconds: 1 },
    });
    await failsWith(limited.listFiles(at(pullRequest.head.sha), [configPath]), 'git-failed', /GitHub API rate limit while listing/);

    const nowhere = createGitHubClients({
      auth: { type: 'token', token: 'x' },
      baseUrl: 'http://127.0.0.1:9',
      throttle: { enabled: false },
      retry: { enabled: false },
    });
    await failsWith(
      new GitHubPreviewFiles({ clients: nowhere }).listFiles(at(pullRequest.head.sha), [configPath]),
      'unreachable',
      /GitHub API could not be reached/,
    );
  });

  it('a file over 1 MiB is not-a-regular-file, without fetching it; a symlink or a submodule is not-a-regular-file', async () => {
    const { pullRequest } = await repo.open({
      files: { [configPath]: `# ${'x'.repeat(1024 * 1024)}\n`, '.preview/link.yaml': { symlinkTo: 'preview.yaml' } },
    });
    const sha = pullRequest.head.sha;
    const source = new GitHubPreviewFiles({ clients });
    const mark = gh.mark();
    const files = await source.listFiles(at(sha), [configPath, '.preview/link.yaml']);
    await failsWith(
      source.readEntry(at(sha), files.get(configPath)!),
      'not-a-regular-file',
      /\.preview\/preview\.yaml at [0-9a-f]{12} is 1048579 bytes, more than the 1048576 allowed/,
    );
    assert.equal(files.get('.preview/link.yaml')!.kind, 'symlink');
    await failsWith(
      source.readEntry(at(sha), files.get('.preview/link.yaml')!),
      'not-a-regular-file',
      /is a symbolic link, not a regular file/,
    );
    assert.deepEqual(requests(mark), ['repos/get-content 200'], 'nothing but the listing');
  });

  it('GitHub lists a submodule as a "file" without a download URL: it is a submodule here, never read', async () => {
    const { pullRequest } = await repo.open({ files: { 'c.txt': 'c\n' } });
    // .preview/ with preview.yaml replaced by a gitlink (a submodule's commit).
    const sha = commitWithPreviewGitlink(repo.git.originPath, pullRequest.head.sha, { name: 'preview.yaml', commit: '6'.repeat(40) });
    const source = new GitHubPreviewFiles({ clients });
    const entry = (await source.listFiles(at(sha), [configPath])).get(configPath)!;
    assert.deepEqual([entry.kind, entry.object], ['submodule', '6'.repeat(40)]);
    await failsWith(source.readEntry(at(sha), entry), 'not-a-regular-file', /is a submodule, not a regular file/);
  });

  it('coordinates that cannot be right never reach GitHub', async () => {
    const source = new GitHubPreviewFiles({ clients });
    const mark = gh.mark();
    await assert.rejects(source.listFiles(at('main'), [configPath]), { name: 'InvalidGitInputError' });
    await assert.rejects(source.listFiles(at('a'.repeat(40)), ['../etc/passwd']), { name: 'InvalidGitInputError' });
    await assert.rejects(source.listFiles(at('a'.repeat(40)), ['preview.yaml']), /not at the repository root/);
    await assert.rejects(source.resolveBranch({ owner: 'files', repo: repo.repository.name, cloneUrl: repo.cloneUrl }, '--upload-pack=x'), {
      name: 'InvalidGitInputError',
    });
    assert.deepEqual(requests(mark), []);
  });
});

describe("the client's conditional requests", () => {
  it('never revalidates or keeps a GET named by a SHA: a blob read twice is two plain 200s, a branch read twice is a 304', async () => {
    const client = await clients.forRepository(repo.repository);
    const head = (await repo.git.resolveRef(`refs/heads/${repo.git.defaultBranch}`))!;
    const blob = { owner: repo.repository.owner, repo: repo.repository.name, file_sha: blobId(head, configPath) };
    const before = client.conditionalRequestStats.notModified;
    const mark = gh.mark();
    await client.rest.git.getBlob(blob);
    await client.rest.git.getBlob(blob);
    assert.deepEqual(requests(mark), ['git/get-blob 200', 'git/get-blob 200']);
    assert.equal(client.conditionalRequestStats.notModified, before);

    const ref = { owner: repo.repository.owner, repo: repo.repository.name, ref: `heads/${repo.git.defaultBranch}` };
    const refMark = gh.mark();
    await client.rest.git.getRef(ref);
    await client.rest.git.getRef(ref);
    assert.deepEqual(requests(refMark), ['git/get-ref 200', 'git/get-ref 304'], 'what can change is still revalidated');
  });
});
