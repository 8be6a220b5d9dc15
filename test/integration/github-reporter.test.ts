// The GitHub reporter against the emulator over real HTTP: one sticky comment, a Deployment
// per SHA, a check run (App) or commit status (token), within GitHub's rules. Every request
// and response is checked against GitHub's OpenAPI description (zero violations per test).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { commentMarker } from '../../src/github/reporting/comment-body.js';
import { createGitHubClients, type GitHubClientOptions } from '../../src/github/octokit-factory.js';
import { GitHubReporter } from '../../src/github/reporting/reporter-github.js';
import { ReportError, type EnvironmentReport, type ReportedGitHubIds } from '../../src/github/reporting/reporter.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';

const gh = await startTestEmulator();
const sha = (c: string) => c.repeat(40);
const pr = 7;
const environment = `preview/pr-${pr}`;
const url = 'https://pr-7-shop.preview.example.com';
let fixtures = 0;

/** A repository with PR #7 open, a reporter authenticated as an App (or with a token), and its own state of known ids. */
function fixture(auth: 'app' | 'token', options: Partial<GitHubClientOptions> = {}) {
  const n = ++fixtures;
  const repository = gh.createRepository({ owner: 'shop', name: `web-${n}`, defaultBranchSha: sha('0') });
  gh.openPullRequest(repository, { number: pr, author: 'alice', head: { ref: 'feature', sha: sha('a') } });
  let clientAuth: GitHubClientOptions['auth'];
  if (auth === 'app') {
    const app = gh.createApp({ slug: `preview-operator-${n}` });
    gh.installApp(app.id, [repository]);
    clientAuth = { type: 'app', appId: app.id, privateKey: app.privateKey };
  } else {
    clientAuth = { type: 'token', token: gh.createToken(`operator-${n}`) };
  }
  const newReporter = () => new GitHubReporter({ clients: createGitHubClients({ auth: clientAuth, baseUrl: gh.url, ...options }) });
  const reporter = newReporter();
  let known: ReportedGitHubIds = {};
  const input = (report: Partial<EnvironmentReport>): EnvironmentReport => ({
    repository,
    pullRequest: pr,
    headSha: sha('a'),
    state: 'queued',
    resources: [],
    reasons: [],
    ...report,
    known,
  });
  return {
    repository,
    newReporter,
    get known() {
      return known;
    },
    set known(ids) {
      known = ids;
    },
    /** Reports and keeps the returned ids, as the controller does with the status. */
    async report(report: Partial<EnvironmentReport>, using = reporter): Promise<ReportedGitHubIds> {
      known = await using.report(input(report));
      return known;
    },
    input,
    comments: () => gh.comments(repository, pr),
    deployments: () => gh.deployments(repository, { environment }),
    push(newSha: string) {
      gh.updatePullRequest(repository, pr, (p) => {
        p.head.sha = newSha;
      });
    },
  };
}

const resources = [
  { kind: 'Algorithm', name: 'recommender', ready: true },
  { kind: 'Database', name: 'orders', ready: false, message: 'waiting for 1 of 2 replicas' },
];

describe('the GitHub reporter', { concurrency: true }, () => {
  it('creates one comment at the first state and edits it in place afterwards', async () => {
    const f = fixture('app');
    await f.report({ state: 'queued' });
    assert.equal(f.comments().length, 1);
    const [first] = f.comments();
    assert.ok(first!.body.startsWith(commentMarker(pr)));
    assert.match(first!.body, /Queued/);
    assert.match(first!.user.login, /^preview-operator-\d+\[bot\]$/);

    await f.report({ state: 'deploying', resources });
    await f.report({ state: 'ready', url, deployedSha: sha('a'), resources: resources.map((r) => ({ ...r, ready: true })) });
    assert.equal(f.comments().length, 1);
    assert.equal(f.comments()[0]!.id, first!.id);
    assert.match(f.comments()[0]!.body, /✅ Ready/);
    assert.match(f.comments()[0]!.body, /\| `Database` \| `orders` \| ✅ \|/);
    assert.match(f.comments()[0]!.body, /\*\*Deployed commit:\*\* `aaaaaaa`/);
    assert.equal(f.known.commentId, first!.id);
  });

  it('sends no request at all when nothing changed', async () => {
    const f = fixture('app');
    const ready = { state: 'ready' as const, url, deployedSha: sha('a'), resources };
    const ids = await f.report(ready);
    const mark = gh.mark();
    const again = await f.report(ready);
    assert.deepEqual(gh.requestsSince(mark, { repository: f.repository }), []);
    assert.deepEqual(again, ids);
  });

  it('shows the URL only once ready: comment, deployment status and check run', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying', url, resources });
    assert.doesNotMatch(f.comments()[0]!.body, /preview\.example\.com/);
    const [deployment] = f.deployments();
    assert.deepEqual(
      deployment!.statuses.map((s) => [s.state, s.environmentUrl]),
      [['in_progress', '']],
    );
    const [run] = gh.checkRuns(f.repository, { name: 'preview-operator' });
    assert.equal(run!.status, 'in_progress');
    assert.equal(run!.detailsUrl, null);

    await f.report({ state: 'ready', url, deployedSha: sha('a'), resources });
    assert.match(f.comments()[0]!.body, /\*\*URL:\*\* https:\/\/pr-7-shop\.preview\.example\.com\//);
    assert.deepEqual(
      f.deployments()[0]!.statuses.map((s) => [s.state, s.environmentUrl]),
      [
        ['in_progress', ''],
        ['success', url],
      ],
    );
    const runs = gh.checkRuns(f.repository, { name: 'preview-operator' });
    assert.equal(runs.length, 1);
    assert.deepEqual(
      [runs[0]!.status, runs[0]!.conclusion, runs[0]!.detailsUrl, runs[0]!.headSha],
      ['completed', 'success', url, sha('a')],
    );
  });

  it('finds its comment again by the marker after a restart, on any page, and never posts a second one', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying' });
    const repo = gh.repository(f.repository);
    // 120 comments by people after ours: the marker comment is on the first page of 100,
    // then 120 more before it move it to the second page.
    for (let i = 0; i < 120; i++)
      repo.comments.unshift({
        ...repo.comments.at(-1)!,
        id: gh.newId(),
        body: `lgtm ${i} ${commentMarker(pr).slice(1)}`,
        app: null,
        user: gh.account('bob'),
      });
    const restarted = f.newReporter();
    f.known = {};
    await f.report({ state: 'ready', url, deployedSha: sha('a') }, restarted);
    const ours = f.comments().filter((c) => c.body.startsWith(commentMarker(pr)));
    assert.equal(ours.length, 1);
    assert.match(ours[0]!.body, /Ready/);
    assert.equal(f.known.commentId, ours[0]!.id);
    // The Deployment of the SHA is found again too, not created twice.
    assert.equal(f.deployments().length, 1);
  });

  for (const auth of ['app', 'token'] as const) {
    it(`never adopts a comment someone else wrote with its marker (${auth})`, async () => {
      const f = fixture(auth);
      const repo = gh.repository(f.repository);
      const forged = `${commentMarker(pr)}\n### ✅ Ready\n**URL:** https://evil.example/login`;
      const planted = {
        id: gh.newId(),
        issueNumber: pr,
        body: forged,
        user: gh.account('mallory'),
        app: null,
        createdAt: '2026-12-01T00:00:00Z',
        updatedAt: '2026-12-01T00:00:00Z',
      };
      repo.comments.push(planted);
      await f.report({ state: 'deploying' });
      await f.report({ state: 'ready', url, deployedSha: sha('a') }, f.newReporter());
      const comments = f.comments();
      assert.equal(comments.length, 2);
      assert.equal(comments.find((c) => c.id === planted.id)!.body, forged);
      const ours = comments.find((c) => c.id !== planted.id)!;
      assert.equal(f.known.commentId, ours.id);
      assert.match(ours.body, /Ready/);
      assert.match(ours.user.login, auth === 'app' ? /^preview-operator-\d+\[bot\]$/ : /^operator-\d+$/);
    });
  }

  it('creates a Deployment per SHA; the previous one goes inactive once the new one is ready', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying' });
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    f.push(sha('b'));
    await f.report({ state: 'deploying', headSha: sha('b'), deployedSha: sha('a') });
    let [first, second] = f.deployments();
    assert.equal(first!.statuses.at(-1)!.state, 'success', 'the previous SHA keeps serving while the new one deploys');
    assert.equal(second!.statuses.at(-1)!.state, 'in_progress');
    await f.report({ state: 'ready', url, headSha: sha('b'), deployedSha: sha('b') });
    [first, second] = f.deployments();
    assert.equal(f.deployments().length, 2);
    assert.deepEqual([first!.sha, second!.sha], [sha('a'), sha('b')]);
    assert.deepEqual(
      first!.statuses.map((s) => s.state),
      ['in_progress', 'success', 'inactive'],
    );
    assert.deepEqual(
      second!.statuses.map((s) => s.state),
      ['in_progress', 'success'],
    );
    for (const d of f.deployments()) {
      assert.deepEqual(
        [d.transientEnvironment, d.productionEnvironment, d.autoMerge, d.requiredContexts, d.environment],
        [true, false, false, [], environment],
      );
    }
    // A check run per head SHA.
    assert.deepEqual(
      gh.checkRuns(f.repository, { name: 'preview-operator' }).map((r) => [r.headSha, r.conclusion]),
      [
        [sha('a'), 'success'],
        [sha('b'), 'success'],
      ],
    );
    assert.equal(f.comments().length, 1);
  });

  it('keeps the serving Deployment active when a new SHA fails, and reports why', async () => {
    const f = fixture('app');
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    f.push(sha('c'));
    const reasons = ['.preview/preview.yaml: /databases/0/replicas must be <= 5'];
    await f.report({ state: 'failed', headSha: sha('c'), deployedSha: sha('a'), reasons });
    const [first, second] = f.deployments();
    assert.equal(first!.statuses.at(-1)!.state, 'success');
    assert.deepEqual(
      second!.statuses.map((s) => [s.state, s.description]),
      [['failure', reasons[0]]],
    );
    assert.match(f.comments()[0]!.body, /❌ Failed[\s\S]*`[^`\n]*\/databases\/0\/replicas must be <= 5`/);
    const run = gh.checkRuns(f.repository, { headSha: sha('c') })[0]!;
    assert.equal(run.conclusion, 'failure');
    assert.match(run.output.summary!, /replicas must be <= 5`/);
  });

  it('on teardown: the comment says destroyed and every Deployment is inactive', async () => {
    const f = fixture('app');
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    f.push(sha('d'));
    await f.report({ state: 'deploying', headSha: sha('d'), deployedSha: sha('a') });
    await f.report({ state: 'destroyed', headSha: sha('d'), deployedSha: sha('a') });
    assert.match(f.comments()[0]!.body, /🗑️ Destroyed/);
    assert.doesNotMatch(f.comments()[0]!.body, /preview\.example\.com/);
    assert.deepEqual(
      f.deployments().map((d) => d.statuses.at(-1)!.state),
      ['inactive', 'inactive'],
    );
    // The run on the head SHA was in progress: it is completed, not left spinning.
    const run = gh.checkRuns(f.repository, { headSha: sha('d') })[0]!;
    assert.deepEqual([run.status, run.conclusion], ['completed', 'cancelled']);
    const mark = gh.mark();
    await f.report({ state: 'destroyed', headSha: sha('d'), deployedSha: sha('a') });
    assert.deepEqual(gh.requestsSince(mark, { repository: f.repository }), []);
  });

  it('with a token (no App): a commit status on the head SHA instead of a check run', async () => {
    const f = fixture('token');
    await f.report({ state: 'deploying' });
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.equal(gh.checkRuns(f.repository).length, 0);
    const statuses = gh.commitStatuses(f.repository, sha('a'));
    assert.deepEqual(
      statuses.map((s) => [s.context, s.state, s.targetUrl]),
      [
        ['preview-operator', 'pending', null],
        ['preview-operator', 'success', url],
      ],
    );
    assert.equal(f.comments().length, 1);
    assert.equal(f.deployments().length, 1);
  });

  it('after a 403 with retry-after: 2 the write is retried once the wait is over, and the result is right', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying' });
    gh.faults.inject({
      repository: f.repository,
      route: 'issues/update-comment',
      fault: { kind: 'secondary-rate-limit', retryAfterSeconds: 2 },
    });
    const mark = gh.mark();
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    const log = gh.requestsSince(mark, { repository: f.repository });
    const edits = log.filter((r) => r.operationId === 'issues/update-comment');
    assert.deepEqual(
      edits.map((r) => r.status),
      [403, 200],
    );
    assert.ok(edits[1]!.startedAt - edits[0]!.finishedAt >= 2000, `retried after ${edits[1]!.startedAt - edits[0]!.finishedAt} ms`);
    // Nothing else was sent inside the window (the emulator would have recorded a rule violation),
    // and nothing was sent twice: one edit, one deployment status, one check run update.
    assert.deepEqual(
      log.map((r) => `${r.operationId} ${r.status}`),
      ['issues/update-comment 403', 'issues/update-comment 200', 'repos/create-deployment-status 201', 'checks/update 200'],
    );
    assert.match(f.comments()[0]!.body, /✅ Ready/);
    assert.equal(f.deployments()[0]!.statuses.at(-1)!.state, 'success');
  });

  it('retries a 5xx and ends in the right state', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying' });
    gh.faults.inject({ repository: f.repository, route: 'repos/create-deployment-status', fault: { kind: 'server-error', status: 502 } });
    const mark = gh.mark();
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    const statuses = gh.requestsSince(mark, { operationId: 'repos/create-deployment-status', repository: f.repository });
    assert.deepEqual(
      statuses.map((r) => r.status),
      [502, 201],
    );
    assert.deepEqual(
      f.deployments()[0]!.statuses.map((s) => s.state),
      ['in_progress', 'success'],
    );
  });

  it('when one part keeps failing, returns the progress made; the next report completes it without duplicates', async () => {
    const f = fixture('app', { retry: { retries: 0 } });
    gh.faults.inject({ repository: f.repository, route: 'checks/create', fault: { kind: 'server-error', status: 500 } });
    const failure = await f
      .newReporter()
      .report(f.input({ state: 'deploying' }))
      .then(
        () => assert.fail('expected a ReportError'),
        (e: unknown) => e,
      );
    assert.ok(failure instanceof ReportError);
    assert.deepEqual(
      failure.failures.map((x) => x.part),
      ['check'],
    );
    assert.ok(failure.partial.commentId !== undefined && failure.partial.deploymentId !== undefined);
    f.known = failure.partial;
    await f.report({ state: 'deploying' });
    assert.equal(f.comments().length, 1);
    assert.equal(f.deployments().length, 1);
    assert.equal(f.deployments()[0]!.statuses.length, 1);
    assert.equal(gh.checkRuns(f.repository, { name: 'preview-operator' }).length, 1);
  });

  it('recreates a comment someone deleted, and never holds two', async () => {
    const f = fixture('token');
    await f.report({ state: 'deploying' });
    const repo = gh.repository(f.repository);
    repo.comments.splice(0, repo.comments.length);
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.equal(f.comments().length, 1);
    assert.match(f.comments()[0]!.body, /Ready/);
    assert.notEqual(f.known.commentId, undefined);
  });

  it('serialises concurrent reports for one PR: one comment, one Deployment', async () => {
    const f = fixture('app');
    const reporter = f.newReporter();
    await Promise.all([reporter.report(f.input({ state: 'deploying' })), reporter.report(f.input({ state: 'deploying', resources }))]);
    assert.equal(f.comments().length, 1);
    assert.equal(f.deployments().length, 1);
  });
});

describe("exactly once when GitHub wrote but its answer was lost (a proxy's 502 after the write)", { concurrency: true }, () => {
  const lostAnswer = (f: ReturnType<typeof fixture>, route: string) =>
    gh.faults.inject({ repository: f.repository, route, fault: { kind: 'lost-answer' } });

  it('the comment: still one, adopted by its marker, and later reports edit that one', async () => {
    const f = fixture('app');
    lostAnswer(f, 'issues/create-comment');
    const mark = gh.mark();
    await f.report({ state: 'deploying' });
    const creates = gh.requestsSince(mark, { operationId: 'issues/create-comment', repository: f.repository });
    assert.deepEqual(
      creates.map((r) => [r.status, r.fault]),
      [[502, 'lost-answer']],
    );
    assert.equal(f.comments().length, 1);
    assert.equal(f.known.commentId, f.comments()[0]!.id);
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.equal(f.comments().length, 1);
    assert.match(f.comments()[0]!.body, /✅ Ready/);
  });

  it('the Deployment: one for the SHA, found by ref + SHA + environment, and its statuses go to it', async () => {
    const f = fixture('token');
    lostAnswer(f, 'repos/create-deployment');
    await f.report({ state: 'deploying' });
    const deployments = gh.deployments(f.repository, { sha: sha('a') });
    assert.equal(deployments.length, 1);
    assert.equal(f.known.deploymentId, deployments[0]!.id);
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.equal(gh.deployments(f.repository, { sha: sha('a') }).length, 1);
    assert.deepEqual(
      deployments[0]!.statuses.map((s) => s.state),
      ['in_progress', 'success'],
    );
  });

  it("the check run: one on the head SHA, found by head SHA + name + the PR's external id", async () => {
    const f = fixture('app');
    lostAnswer(f, 'checks/create');
    await f.report({ state: 'deploying' });
    const runs = () => gh.checkRuns(f.repository, { headSha: sha('a'), name: 'preview-operator' });
    assert.equal(runs().length, 1);
    assert.equal(f.known.checkRunId, runs()[0]!.id);
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.deepEqual(
      runs().map((r) => [r.status, r.conclusion]),
      [['completed', 'success']],
    );
  });

  it('all three lost at once, twice over (504): still one of each', async () => {
    const f = fixture('app');
    for (const route of ['issues/create-comment', 'repos/create-deployment', 'checks/create']) {
      gh.faults.inject({ repository: f.repository, route, times: 2, fault: { kind: 'lost-answer', status: 504 } });
    }
    await f.report({ state: 'deploying' });
    await f.report({ state: 'ready', url, deployedSha: sha('a') });
    assert.equal(f.comments().length, 1);
    assert.equal(f.deployments().length, 1);
    assert.equal(gh.checkRuns(f.repository, { name: 'preview-operator' }).length, 1);
  });

  it('a check run whose id a restart lost is found again; a second PR on the same SHA gets its own', async () => {
    const f = fixture('app');
    await f.report({ state: 'deploying' });
    f.known = {};
    await f.report({ state: 'ready', url, deployedSha: sha('a') }, f.newReporter());
    const runs = gh.checkRuns(f.repository, { headSha: sha('a'), name: 'preview-operator' });
    assert.deepEqual(
      runs.map((r) => [r.conclusion, r.externalId]),
      [['success', 'preview-operator/pr-7']],
    );
    assert.equal(f.comments().length, 1);
    assert.equal(f.deployments().length, 1);

    gh.openPullRequest(f.repository, { number: 8, author: 'bob', head: { ref: 'copy', sha: sha('a') } });
    const other = await f.newReporter().report({ ...f.input({ state: 'deploying' }), pullRequest: 8, known: {} });
    const both = gh.checkRuns(f.repository, { headSha: sha('a'), name: 'preview-operator' });
    assert.equal(both.length, 2);
    assert.notEqual(other.checkRunId, f.known.checkRunId);
    assert.equal(both.find((r) => r.id === f.known.checkRunId)!.conclusion, 'success', "PR #7's run is left as it was");
  });
});
