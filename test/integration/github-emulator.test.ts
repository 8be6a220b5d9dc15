// The GitHub emulator itself: it must answer like GitHub and catch clients that do not
// follow GitHub's description or rules — otherwise the operator's GitHub tests prove nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import { Webhooks } from '@octokit/webhooks';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { createDelivery } from '../github-emulator/webhook-delivery.js';
import { bareGit, commitWithPreviewGitlink } from '../support/git-plumbing.js';

const gh = await startTestEmulator();
const sha = (c: string) => c.repeat(40);

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
/** A plain Octokit (no throttling/retry: these tests look at single requests). */
const client = (token: string) => new Octokit({ auth: token, baseUrl: gh.url, log: quiet });

describe('pulls', () => {
  const repo = gh.createRepository({ owner: 'emu', name: 'pulls', defaultBranchSha: sha('0') });
  gh.setBranch(repo, 'release', sha('9'));
  for (let n = 1; n <= 7; n++) {
    gh.openPullRequest(repo, { author: 'dev', head: { ref: `f${n}`, sha: sha(String(n)) }, base: { ref: n === 7 ? 'release' : 'main' } });
  }
  gh.updatePullRequest(repo, 3, (p) => {
    p.state = 'closed';
    p.closedAt = p.updatedAt;
  });
  const octokit = client(gh.createToken('reader'));

  it('lists open PRs newest first, page by page with Link headers, filtered by base', async () => {
    const first = await octokit.rest.pulls.list({ owner: 'emu', repo: 'pulls', per_page: 2 });
    assert.deepEqual(
      first.data.map((p) => p.number),
      [7, 6],
    );
    assert.match(
      first.headers.link!,
      /<http:\/\/127\.0\.0\.1:\d+\/repos\/emu\/pulls\/pulls\?per_page=2&page=2>; rel="next", <[^>]+page=3>; rel="last"/,
    );
    const all = await octokit.paginate(octokit.rest.pulls.list, { owner: 'emu', repo: 'pulls', per_page: 2 });
    assert.deepEqual(
      all.map((p) => p.number),
      [7, 6, 5, 4, 2, 1],
    );
    const closed = await octokit.rest.pulls.list({ owner: 'emu', repo: 'pulls', state: 'closed' });
    assert.deepEqual(
      closed.data.map((p) => p.number),
      [3],
    );
    const release = await octokit.rest.pulls.list({ owner: 'emu', repo: 'pulls', base: 'release' });
    assert.deepEqual(
      release.data.map((p) => p.number),
      [7],
    );
    const one = await octokit.rest.pulls.get({ owner: 'emu', repo: 'pulls', pull_number: 7 });
    assert.equal(one.data.head.sha, sha('7'));
    assert.equal(one.data.base.ref, 'release');
  });

  it('answers 304 to a matching If-None-Match, without using rate limit, until the PR changes', async () => {
    const first = await octokit.rest.pulls.list({ owner: 'emu', repo: 'pulls' });
    const remaining = Number(first.headers['x-ratelimit-remaining']);
    const etag = first.headers.etag!;
    const notModified = await octokit
      .request('GET /repos/{owner}/{repo}/pulls', { owner: 'emu', repo: 'pulls', headers: { 'if-none-match': etag } })
      .then(
        () => assert.fail('expected 304'),
        (err: { status: number; response: { headers: Record<string, string> } }) => err,
      );
    assert.equal(notModified.status, 304);
    assert.equal(Number(notModified.response.headers['x-ratelimit-remaining']), remaining);
    gh.updatePullRequest(repo, 2, (p) => {
      p.title = 'changed';
    });
    const changed = await octokit.request('GET /repos/{owner}/{repo}/pulls', {
      owner: 'emu',
      repo: 'pulls',
      headers: { 'if-none-match': etag },
    });
    assert.equal(changed.status, 200);
    assert.equal(Number(changed.headers['x-ratelimit-remaining']), remaining - 1);
    assert.notEqual(changed.headers.etag, etag);
  });

  it('sends every rate-limit header and counts down per request', async () => {
    const a = await octokit.rest.pulls.get({ owner: 'emu', repo: 'pulls', pull_number: 1 });
    const b = await octokit.rest.pulls.get({ owner: 'emu', repo: 'pulls', pull_number: 2 });
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-used', 'x-ratelimit-reset', 'x-ratelimit-resource']) {
      assert.ok(a.headers[name] !== undefined, name);
    }
    assert.equal(a.headers['x-ratelimit-limit'], '5000');
    assert.equal(Number(b.headers['x-ratelimit-remaining']), Number(a.headers['x-ratelimit-remaining']) - 1);
    assert.equal(Number(b.headers['x-ratelimit-used']), Number(a.headers['x-ratelimit-used']) + 1);
  });
});

describe('contract checks', () => {
  const repo = gh.createRepository({ owner: 'emu', name: 'contract', defaultBranchSha: sha('0') });
  gh.openPullRequest(repo, { author: 'dev', head: { ref: 'f', sha: sha('a') } });
  const token = gh.createToken('sloppy');
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${gh.url}${path}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('records a request body that does not match the description, and answers 422', async () => {
    const res = await send('POST', '/repos/emu/contract/deployments/1/statuses', { state: 'done' });
    assert.equal(res.status, 422);
    const found = gh.takeViolations();
    assert.equal(found.length, 1);
    assert.equal(found[0]!.kind, 'request');
    assert.match(found[0]!.message, /\/state must be equal to one of the allowed values/);
  });

  it('records unknown query parameters and wrongly typed ones', async () => {
    await send('GET', '/repos/emu/contract/pulls?status=open&per_page=many');
    const messages = gh.takeViolations().map((v) => v.message);
    assert.ok(
      messages.some((m) => /query parameter "status" is not defined for pulls\/list/.test(m)),
      messages.join('\n'),
    );
    assert.ok(
      messages.some((m) => /"per_page"="many": \/ must be integer/.test(m)),
      messages.join('\n'),
    );
  });

  it('records endpoints GitHub does not have', async () => {
    const res = await send('GET', '/repos/emu/contract/previews');
    assert.equal(res.status, 404);
    assert.deepEqual(
      gh.takeViolations().map((v) => v.kind),
      ['unknown-endpoint'],
    );
  });

  it('answers 401 without valid credentials', async () => {
    assert.equal((await fetch(`${gh.url}/repos/emu/contract/pulls`)).status, 401);
    assert.equal((await fetch(`${gh.url}/repos/emu/contract/pulls`, { headers: { authorization: 'token ghp_nope' } })).status, 401);
  });
});

describe('fault injection', () => {
  const repo = gh.createRepository({ owner: 'emu', name: 'faults', defaultBranchSha: sha('0') });
  gh.openPullRequest(repo, { author: 'dev', head: { ref: 'f', sha: sha('a') } });
  const token = gh.createToken('faulty');
  const get = () => fetch(`${gh.url}/repos/emu/faults/pulls/1`, { headers: { authorization: `token ${token}` } });

  it('fails the next N matching requests with 5xx, then answers normally', async () => {
    const fault = gh.faults.inject({ route: 'pulls/get', times: 2, fault: { kind: 'server-error', status: 502 } });
    assert.deepEqual([(await get()).status, (await get()).status, (await get()).status], [502, 502, 200]);
    assert.equal(fault.applied, 2);
  });

  it('answers a secondary rate limit with retry-after, and records a request sent before it elapsed', async () => {
    gh.faults.inject({
      route: 'GET /repos/{owner}/{repo}/pulls/{pull_number}',
      fault: { kind: 'secondary-rate-limit', retryAfterSeconds: 1 },
    });
    const limited = await get();
    assert.equal(limited.status, 403);
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.match(((await limited.json()) as { message: string }).message, /secondary rate limit/);
    assert.equal((await get()).status, 200);
    const broken = gh.takeViolations();
    assert.equal(broken.length, 1);
    assert.equal(broken[0]!.kind, 'rule');
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await get()).status, 200);
  });

  it('answers 429 and delays answers', async () => {
    gh.faults.inject({ route: 'pulls/get', fault: { kind: 'too-many-requests' } });
    assert.equal((await get()).status, 429);
    gh.faults.inject({ route: 'pulls/get', fault: { kind: 'delay', ms: 300 } });
    const started = Date.now();
    assert.equal((await get()).status, 200);
    assert.ok(Date.now() - started >= 300);
  });

  it('refuses requests once the primary limit is exhausted', async () => {
    const other = gh.createToken('exhausted');
    gh.setRateLimit('user:exhausted', { remaining: 0, resetInSeconds: 600 });
    const res = await fetch(`${gh.url}/repos/emu/faults/pulls/1`, { headers: { authorization: `token ${other}` } });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
  });
});

describe('GitHub Apps, checks, statuses and deployments', () => {
  const repo = gh.createRepository({ owner: 'emu', name: 'apps', defaultBranchSha: sha('0') });
  const elsewhere = gh.createRepository({ owner: 'emu', name: 'not-installed', defaultBranchSha: sha('0') });
  const app = gh.createApp({ slug: 'emu-app' });
  const installationId = gh.installApp(app.id, [repo]);
  const asApp = (auth: { privateKey: string; installationId?: number }) =>
    new Octokit({ authStrategy: createAppAuth, auth: { appId: app.id, ...auth }, baseUrl: gh.url, log: quiet });
  const appClient = asApp({ privateKey: app.privateKey });
  const installation = asApp({ privateKey: app.privateKey, installationId });

  it('finds the installation of a repository with the App JWT and exchanges it for a token scoped to it', async () => {
    assert.equal((await appClient.rest.apps.getRepoInstallation({ owner: 'emu', repo: 'apps' })).data.id, installationId);
    await assert.rejects(appClient.rest.apps.getRepoInstallation({ owner: elsewhere.owner, repo: elsewhere.name }), { status: 404 });
    const created = await installation.rest.checks.create({ owner: 'emu', repo: 'apps', name: 'x', head_sha: sha('1') });
    assert.equal(created.data.app?.slug, 'emu-app');
    await assert.rejects(installation.rest.pulls.list({ owner: elsewhere.owner, repo: elsewhere.name }), { status: 404 });
  });

  it('rejects a JWT signed with another key', async () => {
    const forged = asApp({ privateKey: gh.createApp().privateKey });
    await assert.rejects(forged.rest.apps.getRepoInstallation({ owner: 'emu', repo: 'apps' }), { status: 401 });
  });

  it('creates check runs only for Apps, and groups them into check suites for the ref', async () => {
    const user = client(gh.createToken('someone'));
    await assert.rejects(user.rest.checks.create({ owner: 'emu', repo: 'apps', name: 'x', head_sha: sha('2') }), { status: 403 });
    const run = await installation.rest.checks.create({
      owner: 'emu',
      repo: 'apps',
      name: 'preview',
      head_sha: sha('2'),
      status: 'in_progress',
    });
    gh.addCheckRun(repo, { headSha: sha('2'), name: 'build', conclusion: 'success' });
    let suites = (await installation.rest.checks.listSuitesForRef({ owner: 'emu', repo: 'apps', ref: sha('2') })).data.check_suites;
    assert.deepEqual(suites.map((s) => [s.app?.slug, s.status]).sort(), [
      ['ci', 'completed'],
      ['emu-app', 'in_progress'],
    ]);
    // GitHub counts a summary in bytes: 40,000 characters of four bytes each are refused.
    const summary = '@\u200b'.repeat(20_000);
    await assert.rejects(
      installation.rest.checks.update({ owner: 'emu', repo: 'apps', check_run_id: run.data.id, output: { title: 't', summary } }),
      { status: 422 },
    );
    await installation.rest.checks.update({ owner: 'emu', repo: 'apps', check_run_id: run.data.id, conclusion: 'failure' });
    suites = (await installation.rest.checks.listSuitesForRef({ owner: 'emu', repo: 'apps', ref: sha('2') })).data.check_suites;
    assert.deepEqual(suites.map((s) => s.conclusion).sort(), ['failure', 'success']);
  });

  it('combines commit statuses as GitHub does (latest per context)', async () => {
    const user = client(gh.createToken('ci'));
    const combined = async () => (await user.rest.repos.getCombinedStatusForRef({ owner: 'emu', repo: 'apps', ref: sha('3') })).data;
    assert.equal((await combined()).state, 'pending');
    await user.rest.repos.createCommitStatus({ owner: 'emu', repo: 'apps', sha: sha('3'), state: 'failure', context: 'lint' });
    await user.rest.repos.createCommitStatus({ owner: 'emu', repo: 'apps', sha: sha('3'), state: 'success', context: 'test' });
    assert.equal((await combined()).state, 'failure');
    await user.rest.repos.createCommitStatus({ owner: 'emu', repo: 'apps', sha: sha('3'), state: 'success', context: 'lint' });
    const now = await combined();
    assert.equal(now.state, 'success');
    assert.equal(now.total_count, 2);
  });

  it('refuses a deployment whose commit statuses fail unless required_contexts is empty, and auto-inactivates only non-transient ones', async () => {
    const user = client(gh.createToken('deployer'));
    gh.addCommitStatus(repo, { sha: sha('4'), context: 'test', state: 'failure' });
    await assert.rejects(user.rest.repos.createDeployment({ owner: 'emu', repo: 'apps', ref: sha('4'), environment: 'staging' }), {
      status: 409,
    });
    const ids: number[] = [];
    for (const transient of [true, true, false, false]) {
      const d = await user.rest.repos.createDeployment({
        owner: 'emu',
        repo: 'apps',
        ref: sha('4'),
        environment: transient ? 'preview' : 'staging',
        required_contexts: [],
        transient_environment: transient,
        production_environment: false,
      });
      const id = (d.data as { id: number }).id;
      ids.push(id);
      await user.rest.repos.createDeploymentStatus({ owner: 'emu', repo: 'apps', deployment_id: id, state: 'success' });
    }
    const states = ids.map((id) =>
      gh
        .deployments(repo)
        .find((d) => d.id === id)!
        .statuses.map((s) => s.state)
        .join(','),
    );
    // The transient ones stay active (clients must retire them); the older staging one was retired by GitHub.
    assert.deepEqual(states, ['success', 'success', 'success,inactive', 'success']);
  });
});

describe('pull request helpers and webhook deliveries', () => {
  const app = gh.createApp();

  it('open, push, label, draft and merge act on a real bare repository and deliver signed, valid payloads', async (t) => {
    const driver = await PullRequestDriver.create(gh, { owner: 'emu', webhookSecret: 's3cret' });
    t.after(() => driver.cleanup());
    const opened = await driver.open({ files: { '.preview/preview.yaml': 'algorithms: []\n' }, labels: ['preview'], author: 'alice' });
    const refs = await driver.git.listRefs();
    assert.equal(refs.get('refs/pull/1/head'), opened.pullRequest.head.sha);
    assert.equal(refs.get('refs/heads/feature-1'), opened.pullRequest.head.sha);
    const payload = opened.delivery.payload as {
      action: string;
      number: number;
      pull_request: { head: { sha: string }; labels: Array<{ name: string }>; user: { login: string } };
    };
    assert.equal(payload.action, 'opened');
    assert.equal(payload.number, 1);
    assert.equal(payload.pull_request.head.sha, opened.pullRequest.head.sha);
    assert.deepEqual(
      payload.pull_request.labels.map((l) => l.name),
      ['preview'],
    );
    assert.equal(payload.pull_request.user.login, 'alice');

    const webhooks = new Webhooks({ secret: 's3cret' });
    assert.equal(await webhooks.verify(opened.delivery.body, opened.delivery.headers['x-hub-signature-256']!), true);
    assert.equal(
      await new Webhooks({ secret: 'other' }).verify(opened.delivery.body, opened.delivery.headers['x-hub-signature-256']!),
      false,
    );
    assert.equal(opened.delivery.headers['x-github-event'], 'pull_request');
    assert.match(opened.delivery.headers['x-github-delivery']!, /^[0-9a-f-]{36}$/);

    const pushed = await driver.push(1, { 'src/app.ts': 'export {}\n' });
    assert.equal((pushed.delivery.payload as { before: string }).before, opened.pullRequest.head.sha);
    assert.equal((pushed.delivery.payload as { after: string }).after, await driver.git.resolveRef('refs/pull/1/head'));
    assert.notEqual(pushed.delivery.id, opened.delivery.id);

    const labeled = await driver.label(1, 'deploy');
    assert.equal((labeled.delivery.payload as { label: { name: string } }).label.name, 'deploy');
    assert.deepEqual(
      driver.pullRequest(1).labels.map((l) => l.name),
      ['preview', 'deploy'],
    );
    await driver.unlabel(1, 'preview');
    assert.deepEqual(
      driver.pullRequest(1).labels.map((l) => l.name),
      ['deploy'],
    );
    assert.equal(((await driver.convertToDraft(1)).delivery.payload as { pull_request: { draft: boolean } }).pull_request.draft, true);
    assert.equal(((await driver.readyForReview(1)).delivery.payload as { pull_request: { draft: boolean } }).pull_request.draft, false);

    const closed = await driver.close(1, { merged: true });
    const pr = (closed.delivery.payload as { pull_request: { merged: boolean; state: string; merge_commit_sha: string } }).pull_request;
    assert.equal(pr.merged, true);
    assert.equal(pr.state, 'closed');
    assert.equal(await driver.git.resolveRef('refs/heads/main'), pr.merge_commit_sha);
  });

  it('opens a PR from a fork: the commit is only in refs/pull/<n>/head and the payload says fork', async (t) => {
    const driver = await PullRequestDriver.create(gh, { owner: 'emu', app: { id: app.id, installationId: 12345 } });
    t.after(() => driver.cleanup());
    const opened = await driver.open({ files: { 'x.txt': 'x' }, fork: 'mallory', authorAssociation: 'FIRST_TIME_CONTRIBUTOR' });
    type Payload = { pull_request: { head: { repo: { fork: boolean; full_name: string } }; author_association: string } };
    const head = (opened.delivery.payload as Payload).pull_request;
    assert.equal(head.head.repo.fork, true);
    assert.equal(head.head.repo.full_name, `mallory/${driver.repository.name}`);
    assert.equal(head.author_association, 'FIRST_TIME_CONTRIBUTOR');
    assert.equal((opened.delivery.payload as { installation: { id: number } }).installation.id, 12345);
    assert.equal(opened.delivery.headers['x-github-hook-installation-target-type'], 'integration');
    const refs = await driver.git.listRefs();
    assert.equal(refs.get('refs/pull/1/head'), opened.pullRequest.head.sha);
    assert.equal(
      [...refs.keys()].some((r) => r.startsWith('refs/heads/patch-')),
      false,
    );
  });

  it('deliver(url) POSTs exactly the signed bytes and headers, or a tampered copy', async (t) => {
    const driver = await PullRequestDriver.create(gh, { owner: 'emu' });
    t.after(() => driver.cleanup());
    const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`;
    const { delivery } = await driver.open({ files: { 'a.txt': 'a' } });
    assert.equal((await delivery.deliver(url)).status, 202);
    await delivery.deliver(url, { headers: { 'x-hub-signature-256': undefined }, body: '{"tampered":true}' });
    assert.equal(received[0]!.body, delivery.body);
    assert.equal(received[0]!.headers['x-hub-signature-256'], delivery.headers['x-hub-signature-256']);
    assert.equal(received[0]!.headers['x-github-delivery'], delivery.id);
    assert.equal(received[1]!.headers['x-hub-signature-256'], undefined);
    assert.equal(received[1]!.body, '{"tampered":true}');
  });

  it('records a webhook payload that does not match the description', () => {
    const problems: string[] = [];
    createDelivery({
      event: 'pull_request',
      payload: { action: 'opened', number: 'one', pull_request: {}, repository: {}, sender: {} },
      hook: { secret: 'x', id: 1, targetType: 'repository', targetId: 1 },
      contract: gh.contract,
      onProblems: (p) => problems.push(...p),
    });
    assert.ok(
      problems.some((p) => /webhook pull-request-opened: .*\/number must be integer/.test(p)),
      problems.join('\n'),
    );
  });
});

describe('repository contents, blobs, commits and refs from the real git repository', () => {
  const token = gh.createToken('contents-reader');
  const octokit = client(token);
  const big = 'x'.repeat(1024 * 1024 + 1);

  /** `git rev-parse` in the driver's bare repository. */
  const revParse = (driver: PullRequestDriver, name: string) => bareGit(driver.git.originPath)(['rev-parse', name]);

  it('lists a directory at a SHA as GitHub does: types, sizes, blob ids, URLs; a submodule is a "file" without download URL', async (t) => {
    const driver = await PullRequestDriver.create(gh, {
      owner: 'emu',
      initialFiles: {
        '.preview/preview.yaml': 'version: 1\n',
        '.preview/main.ts': 'export {};\n',
        '.preview/docs/a.md': 'a\n',
        '.preview/link.yaml': { symlinkTo: 'preview.yaml' },
      },
    });
    t.after(() => driver.cleanup());
    const main = revParse(driver, 'refs/heads/main');
    const sha = commitWithPreviewGitlink(driver.git.originPath, main, {
      name: 'vendored',
      commit: '5'.repeat(40),
      url: 'https://example.com/vendored.git',
    });
    const { data } = await octokit.rest.repos.getContent({ owner: 'emu', repo: driver.repository.name, path: '.preview', ref: sha });
    assert.ok(Array.isArray(data));
    const byName = new Map(data.map((d) => [d.name, d]));
    assert.deepEqual([...byName.keys()].sort(), ['docs', 'link.yaml', 'main.ts', 'preview.yaml', 'vendored']);
    assert.deepEqual(byName.get('preview.yaml'), {
      ...byName.get('preview.yaml'),
      type: 'file',
      size: 11,
      path: '.preview/preview.yaml',
      sha: revParse(driver, `${sha}:.preview/preview.yaml`),
    });
    assert.equal(byName.get('docs')!.type, 'dir');
    assert.equal(byName.get('docs')!.download_url, null);
    assert.equal(byName.get('link.yaml')!.type, 'symlink');
    assert.equal(byName.get('link.yaml')!.size, 'preview.yaml'.length);
    assert.deepEqual(
      [byName.get('vendored')!.type, byName.get('vendored')!.download_url, byName.get('vendored')!.sha],
      ['file', null, '5'.repeat(40)],
    );
    assert.match(byName.get('main.ts')!.git_url!, new RegExp(`/repos/emu/${driver.repository.name}/git/blobs/[0-9a-f]{40}$`));

    const submodule = await octokit.rest.repos.getContent({
      owner: 'emu',
      repo: driver.repository.name,
      path: '.preview/vendored',
      ref: sha,
    });
    assert.deepEqual(
      [(submodule.data as { type: string }).type, (submodule.data as { submodule_git_url: string }).submodule_git_url],
      ['submodule', 'https://example.com/vendored.git'],
    );
  });

  it('answers a file with its base64 content (the default branch without ?ref), a symlink to a file with that file, a file over 1 MB with 403', async (t) => {
    const driver = await PullRequestDriver.create(gh, {
      owner: 'emu',
      initialFiles: {
        '.preview/preview.yaml': 'version: 1 # é\n',
        '.preview/link.yaml': { symlinkTo: 'preview.yaml' },
        '.preview/out': { symlinkTo: '../../etc/passwd' },
        'big.bin': big,
      },
    });
    t.after(() => driver.cleanup());
    const repo = driver.repository.name;
    const file = (await octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview/preview.yaml' })).data as {
      type: string;
      encoding: string;
      content: string;
    };
    assert.deepEqual([file.type, file.encoding], ['file', 'base64']);
    assert.equal(Buffer.from(file.content, 'base64').toString('utf8'), 'version: 1 # é\n');
    const viaLink = (await octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview/link.yaml' })).data as {
      type: string;
      path: string;
    };
    assert.deepEqual([viaLink.type, viaLink.path], ['file', '.preview/preview.yaml']);
    const outside = (await octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview/out' })).data as {
      type: string;
      target: string;
    };
    assert.deepEqual([outside.type, outside.target], ['symlink', '../../etc/passwd']);
    await assert.rejects(
      octokit.rest.repos.getContent({ owner: 'emu', repo, path: 'big.bin' }),
      (err: { status: number; response: { data: { errors: { code: string }[] } } }) =>
        err.status === 403 && err.response.data.errors[0]!.code === 'too_large',
    );
    const listing = (await octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview', ref: 'main' })).data as { name: string }[];
    assert.deepEqual(listing.map((d) => d.name).sort(), ['link.yaml', 'out', 'preview.yaml']);

    const blobSha = revParse(driver, 'main:big.bin');
    const blob = await octokit.rest.git.getBlob({ owner: 'emu', repo, file_sha: blobSha });
    assert.deepEqual([blob.data.encoding, blob.data.size, blob.data.sha], ['base64', big.length, blobSha]);
    assert.equal(Buffer.from(blob.data.content, 'base64').toString('utf8'), big);
    await assert.rejects(octokit.rest.git.getBlob({ owner: 'emu', repo, file_sha: '0'.repeat(40) }), { status: 404 });
  });

  it('404 "No commit found for the ref" for an unknown ref, plain 404 for a missing path; 304 for an unchanged listing', async (t) => {
    const driver = await PullRequestDriver.create(gh, { owner: 'emu', initialFiles: { '.preview/preview.yaml': 'version: 1\n' } });
    t.after(() => driver.cleanup());
    const repo = driver.repository.name;
    await assert.rejects(
      octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview', ref: 'f'.repeat(40) }),
      (err: { status: number; message: string }) => err.status === 404 && /No commit found for the ref f{40}/.test(err.message),
    );
    await assert.rejects(
      octokit.rest.repos.getContent({ owner: 'emu', repo, path: 'nothing/here', ref: 'main' }),
      (err: { status: number; message: string }) => err.status === 404 && err.message.startsWith('Not Found'),
    );
    const first = await octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview', ref: 'main' });
    await assert.rejects(
      octokit.request('GET /repos/{owner}/{repo}/contents/{path}', {
        owner: 'emu',
        repo,
        path: '.preview',
        ref: 'main',
        headers: { 'if-none-match': first.headers.etag! },
      }),
      { status: 304 },
    );
    gh.faults.inject({ route: 'repos/get-content', repository: driver.repository, fault: { kind: 'server-error', status: 502 } });
    await assert.rejects(octokit.rest.repos.getContent({ owner: 'emu', repo, path: '.preview', ref: 'main' }), { status: 502 });
    const logged = gh.requestsSince(0, { repository: driver.repository, operationId: 'repos/get-content' });
    assert.deepEqual(
      logged.map((r) => r.status),
      [404, 404, 200, 304, 502],
    );
  });

  it('a commit by SHA or branch as JSON or as the bare SHA (application/vnd.github.sha); 422 for an unknown one; refs follow pushes', async (t) => {
    const driver = await PullRequestDriver.create(gh, { owner: 'emu', initialFiles: { 'README.md': 'x\n' } });
    t.after(() => driver.cleanup());
    const repo = driver.repository.name;
    const before = revParse(driver, 'refs/heads/main');
    const commit = await octokit.rest.repos.getCommit({ owner: 'emu', repo, ref: 'main' });
    assert.equal(commit.data.sha, before);
    assert.equal(commit.data.commit.message, 'initial commit');
    assert.deepEqual(commit.data.parents, []);
    const bare = await octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', {
      owner: 'emu',
      repo,
      ref: before,
      headers: { accept: 'application/vnd.github.sha' },
    });
    assert.equal(bare.data, before);
    await assert.rejects(
      octokit.request('GET /repos/{owner}/{repo}/commits/{ref}', {
        owner: 'emu',
        repo,
        ref: 'e'.repeat(40),
        headers: { accept: 'application/vnd.github.sha' },
      }),
      { status: 422 },
    );

    assert.equal((await octokit.rest.git.getRef({ owner: 'emu', repo, ref: 'heads/main' })).data.object.sha, before);
    await assert.rejects(octokit.rest.git.getRef({ owner: 'emu', repo, ref: 'heads/nope' }), { status: 404 });
    const after = await driver.git.commit('main', { 'README.md': 'y\n' });
    const moved = await octokit.rest.git.getRef({ owner: 'emu', repo, ref: 'heads/main' });
    assert.deepEqual([moved.data.ref, moved.data.object.type, moved.data.object.sha], ['refs/heads/main', 'commit', after]);
    assert.equal((await octokit.rest.repos.getCommit({ owner: 'emu', repo, ref: 'main' })).data.parents[0]!.sha, before);
  });

  it('records a violation when a repository has no git data attached', async () => {
    const bare = gh.createRepository({ owner: 'emu', name: 'no-git', defaultBranchSha: sha('0') });
    await assert.rejects(octokit.rest.repos.getContent({ owner: bare.owner, repo: bare.name, path: '.preview' }), { status: 404 });
    const found = gh.takeViolations();
    assert.deepEqual(
      found.map((v) => v.kind),
      ['unimplemented'],
    );
    assert.match(found[0]!.message, /attachGitRepository/);
  });
});
