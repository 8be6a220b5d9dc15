// The Octokit factory against the GitHub emulator over real HTTP: App and token auth, GHES
// base URL, conditional requests, retries and GitHub's rate-limit rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { GitHubRateLimitedError, type RateLimitSnapshot } from '../../src/github/octokit-rate-limit.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';

const gh = await startTestEmulator();
const sha = (c: string) => c.repeat(40);
let repoCount = 0;

function repositoryWithPulls(count: number) {
  const repo = gh.createRepository({ owner: 'octo', name: `repo-${++repoCount}`, defaultBranchSha: sha('0') });
  for (let n = 1; n <= count; n++) gh.openPullRequest(repo, { author: 'dev', head: { ref: `f${n}`, sha: sha(String(n)) } });
  return repo;
}

function tokenClients(login: string, options: Partial<Parameters<typeof createGitHubClients>[0]> = {}) {
  return createGitHubClients({ auth: { type: 'token', token: gh.createToken(login) }, baseUrl: gh.url, ...options });
}

describe('conditional requests', () => {
  it('sends a repeated GET with If-None-Match and serves the 304 from its cache, without using rate limit', async () => {
    const repo = repositoryWithPulls(3);
    const clients = tokenClients('etag-reader');
    const client = await clients.forRepository(repo);
    const params = { owner: repo.owner, repo: repo.name, per_page: 1 };
    const first = await client.paginate(client.rest.pulls.list, params);
    const remaining = clients.rateLimits.snapshots()[0]!.remaining;
    const mark = gh.mark();
    const second = await client.paginate(client.rest.pulls.list, params);
    assert.deepEqual(second, first);
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => r.status),
      [304, 304, 304],
    );
    assert.equal(clients.rateLimits.snapshots()[0]!.remaining, remaining);
    assert.equal(client.conditionalRequestStats.notModified, 3);

    gh.updatePullRequest(repo, 3, (p) => {
      p.title = 'renamed';
    });
    const third = await client.paginate(client.rest.pulls.list, params);
    assert.equal(third[0]!.title, 'renamed');
    assert.equal(clients.rateLimits.snapshots()[0]!.remaining, remaining - 1);
  });

  it('hands out a copy of the cached body, so a caller changing it does not change the next answer', async () => {
    const repo = repositoryWithPulls(1);
    const client = await tokenClients('mutator').forRepository(repo);
    const a = await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    const b = await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    b.data.title = 'scribbled';
    const c = await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    assert.equal(c.data.title, a.data.title);
    assert.equal(client.conditionalRequestStats.notModified, 2);
  });
});

describe('GitHub App authentication', () => {
  it('looks up the installation of each repository once and exchanges its token once', async () => {
    const a = repositoryWithPulls(1);
    const b = repositoryWithPulls(1);
    const app = gh.createApp();
    const installationId = gh.installApp(app.id, [a, b]);
    const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url });
    assert.equal(clients.authType, 'app');
    const mark = gh.mark();
    const [c1, c2] = await Promise.all([clients.forRepository(a), clients.forRepository(a)]);
    const c3 = await clients.forRepository(b);
    assert.equal(c1, c2);
    assert.equal(c1, c3);
    await Promise.all([
      c1.rest.pulls.get({ owner: a.owner, repo: a.name, pull_number: 1 }),
      c3.rest.pulls.get({ owner: b.owner, repo: b.name, pull_number: 1 }),
      (await clients.forRepository(a)).rest.pulls.list({ owner: a.owner, repo: a.name }),
    ]);
    const log = gh.requestsSince(mark);
    assert.equal(log.filter((r) => r.operationId === 'apps/get-repo-installation').length, 2);
    assert.equal(log.filter((r) => r.operationId === 'apps/create-installation-access-token').length, 1);
    assert.ok(log.filter((r) => r.operationId?.startsWith('pulls/')).every((r) => r.identity === `installation:${installationId}`));
    assert.equal(await clients.installationIdFor(a), installationId);

    const token = await clients.tokenFor(a);
    const res = await fetch(`${gh.url}/repos/${a.owner}/${a.name}/pulls`, { headers: { authorization: `token ${token}` } });
    assert.equal(res.status, 200);
  });

  it('does not cache a failed lookup: a repository the App is installed on later works', async () => {
    const repo = repositoryWithPulls(1);
    const app = gh.createApp();
    const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url });
    await assert.rejects(clients.forRepository(repo), { status: 404 });
    gh.installApp(app.id, [repo]);
    const client = await clients.forRepository(repo);
    assert.equal((await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 })).status, 200);
  });

  it('talks to a GitHub Enterprise Server base URL for everything, the token exchange included', async () => {
    const repo = repositoryWithPulls(1);
    const app = gh.createApp();
    gh.installApp(app.id, [repo]);
    const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: `${gh.url}/api/v3` });
    const mark = gh.mark();
    const client = await clients.forRepository(repo);
    await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    const log = gh.requestsSince(mark);
    assert.deepEqual(
      log.map((r) => r.operationId),
      ['apps/get-repo-installation', 'apps/create-installation-access-token', 'pulls/get'],
    );
    assert.ok(log.every((r) => r.prefix === '/api/v3'));
  });
});

describe('retries and rate limits', () => {
  it('retries a server error after a pause, and gives up after the configured retries', async () => {
    const repo = repositoryWithPulls(1);
    const client = await tokenClients('flaky', { retry: { retries: 1 } }).forRepository(repo);
    gh.faults.inject({ route: 'pulls/get', times: 1, fault: { kind: 'server-error', status: 502 } });
    let mark = gh.mark();
    assert.equal((await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 })).status, 200);
    let log = gh.requestsSince(mark);
    assert.deepEqual(
      log.map((r) => r.status),
      [502, 200],
    );
    assert.ok(log[1]!.startedAt - log[0]!.finishedAt >= 900, `retried after ${log[1]!.startedAt - log[0]!.finishedAt} ms`);

    gh.faults.inject({ route: 'pulls/get', times: 5, fault: { kind: 'server-error', status: 500 } });
    mark = gh.mark();
    await assert.rejects(client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 }), { status: 500 });
    log = gh.requestsSince(mark);
    assert.deepEqual(
      log.map((r) => r.status),
      [500, 500],
    );
    gh.faults.clear();
  });

  it('after a secondary rate limit with retry-after: 2, retries the write once the wait is over and sends nothing else meanwhile', async () => {
    const repo = repositoryWithPulls(1);
    const clients = tokenClients('hasty');
    const client = await clients.forRepository(repo);
    gh.faults.inject({ route: 'issues/create-comment', fault: { kind: 'secondary-rate-limit', retryAfterSeconds: 2 } });
    const mark = gh.mark();
    // The refusal has been read once its rate-limit headers are recorded (the pause is set right after, in the same turn).
    const refusalRead = new Promise<void>((resolve) => {
      const stop = clients.rateLimits.subscribe(() => {
        stop();
        resolve();
      });
    });
    const write = client.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: 1, body: 'hello' });
    await refusalRead;
    // Another request of the same credential while the wait runs: it must wait too.
    const read = client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    await Promise.all([write, read]);
    const log = gh.requestsSince(mark);
    const writes = log.filter((r) => r.operationId === 'issues/create-comment');
    assert.deepEqual(
      writes.map((r) => r.status),
      [403, 201],
    );
    assert.ok(writes[1]!.startedAt - writes[0]!.finishedAt >= 2000, `retried after ${writes[1]!.startedAt - writes[0]!.finishedAt} ms`);
    const reads = log.filter((r) => r.operationId === 'pulls/get');
    assert.equal(reads.length, 1);
    assert.ok(reads[0]!.startedAt >= writes[0]!.finishedAt + 2000 - 5, 'the read waited for the end of the retry-after window');
    assert.equal(gh.comments(repo, 1).length, 1);
    // The emulator's afterEach check fails the test if anything was sent inside the window.
  });

  it('never sends a create again after a 5xx: GitHub may have written it (the lost answer)', async () => {
    const repo = repositoryWithPulls(1);
    const client = await tokenClients('careful').forRepository(repo);
    gh.faults.inject({ repository: repo, route: 'issues/create-comment', fault: { kind: 'lost-answer' } });
    const mark = gh.mark();
    const create = client.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: 1, body: 'once' });
    await assert.rejects(create, { status: 502 });
    const log = gh.requestsSince(mark, { repository: repo });
    assert.deepEqual(
      log.map((r) => [r.operationId, r.status, r.fault]),
      [['issues/create-comment', 502, 'lost-answer']],
    );
    assert.equal(gh.comments(repo, 1).length, 1, 'GitHub wrote it, and it was not written twice');
  });

  for (const status of [429, 403] as const) {
    it(`a plain ${status} with retry-after: 2 holds every request of the credential until then; then the write goes`, async () => {
      const repo = repositoryWithPulls(1);
      const clients = tokenClients(`patient-${status}`);
      const client = await clients.forRepository(repo);
      // Not the words of a secondary limit: "Too Many Requests", or a 403 "abuse detection mechanism".
      const fault = { kind: 'too-many-requests', status, retryAfterSeconds: 2 } as const;
      gh.faults.inject({ repository: repo, route: 'issues/create-comment', fault });
      const mark = gh.mark();
      const refusalRead = new Promise<void>((resolve) => {
        const stop = clients.rateLimits.subscribe(() => {
          stop();
          resolve();
        });
      });
      const write = client.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: 1, body: 'later' });
      await refusalRead;
      // Requests of the same credential asked for during the wait, reads and another write.
      const others = [
        client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 }),
        client.rest.pulls.list({ owner: repo.owner, repo: repo.name }),
        client.rest.repos.createCommitStatus({ owner: repo.owner, repo: repo.name, sha: sha('1'), state: 'pending', context: 'c' }),
      ];
      await Promise.all([write, ...others]);
      const log = gh.requestsSince(mark);
      const refusal = log.find((r) => r.status === status)!;
      assert.equal(refusal.fault, 'too-many-requests');
      // The emulator's own timestamps: nothing of this credential arrived between the refusal and its retry-after instant.
      const inside = log.filter((r) => r.identity === refusal.identity && r !== refusal && r.startedAt < refusal.finishedAt + 2000);
      assert.deepEqual(
        inside.map((r) => `${r.method} ${r.path} at +${r.startedAt - refusal.finishedAt} ms`),
        [],
      );
      assert.deepEqual(
        log.filter((r) => r.operationId === 'issues/create-comment').map((r) => r.status),
        [status, 201],
      );
      assert.deepEqual(
        log
          .filter((r) => r !== refusal)
          .map((r) => r.status)
          .sort(),
        [200, 200, 201, 201],
      );
      assert.equal(gh.comments(repo, 1).length, 1);
    });
  }

  it('bounds the retries after secondary rate limits and honours 429 retry-after', async () => {
    const repo = repositoryWithPulls(1);
    const client = await tokenClients('stubborn').forRepository(repo);
    gh.faults.inject({
      route: 'issues/create-comment',
      times: 10,
      fault: { kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 1 },
    });
    let mark = gh.mark();
    await assert.rejects(client.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: 1, body: 'x' }), {
      status: 429,
    });
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => r.status),
      [429, 429, 429],
    );
    assert.equal(gh.comments(repo, 1).length, 0);
    gh.faults.clear();
    await new Promise((r) => setTimeout(r, 1000));

    gh.faults.inject({
      route: 'issues/create-comment',
      times: 1,
      fault: { kind: 'secondary-rate-limit', status: 429, retryAfterSeconds: 1 },
    });
    mark = gh.mark();
    await client.rest.issues.createComment({ owner: repo.owner, repo: repo.name, issue_number: 1, body: 'y' });
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => r.status),
      [429, 201],
    );
  });

  it('stops sending once the primary limit is used up, and says until when', async () => {
    const repo = repositoryWithPulls(1);
    const clients = tokenClients('greedy');
    const seen: RateLimitSnapshot[] = [];
    clients.rateLimits.subscribe((s) => seen.push(s));
    const client = await clients.forRepository(repo);
    gh.setRateLimit('user:greedy', { remaining: 1, resetInSeconds: 3600 });
    await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    assert.equal(seen.at(-1)!.remaining, 0);
    assert.equal(seen.at(-1)!.client, 'token');
    const mark = gh.mark();
    await assert.rejects(client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 }), (err: unknown) => {
      assert.ok(err instanceof GitHubRateLimitedError);
      assert.ok(Math.abs(err.until.getTime() - seen.at(-1)!.resetAt.getTime()) < 1000);
      return true;
    });
    assert.equal(gh.requestsSince(mark).length, 0);
  });

  it("publishes every response's rate limit per client", async () => {
    const repo = repositoryWithPulls(1);
    const clients = tokenClients('metrics');
    const client = await clients.forRepository(repo);
    const res = await client.rest.pulls.get({ owner: repo.owner, repo: repo.name, pull_number: 1 });
    const [snapshot] = clients.rateLimits.snapshots();
    assert.equal(snapshot!.limit, 5000);
    assert.equal(snapshot!.remaining, Number(res.headers['x-ratelimit-remaining']));
    assert.equal(snapshot!.used, Number(res.headers['x-ratelimit-used']));
    assert.equal(snapshot!.resource, 'core');
    assert.equal(snapshot!.resetAt.getTime(), Number(res.headers['x-ratelimit-reset']) * 1000);
  });
});
