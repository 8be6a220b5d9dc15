// The resync against the real API server and the GitHub emulator over HTTP: it repairs
// missed webhooks (a lost `opened`, a lost `closed`), writes nothing when nothing changed,
// never deletes on a failed or rate-limited listing, caps deletions, and never deploys an
// untrusted commit whose approval it cannot confirm. The audit log shows every write the
// operator's identity made; the emulator checks every request against GitHub's OpenAPI.
import assert from 'node:assert/strict';
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { after, before, describe, it } from 'node:test';
import { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import { KubeEnvironmentStore } from '../../src/intake/environment-store.js';
import { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { TransientError } from '../../src/kube/errors.js';
import { createLabelRemover } from '../../src/github/reporting/label-remover.js';
import { createGitHubClients, type GitHubClients } from '../../src/github/octokit-factory.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { createResyncRunnable, resyncOnce, type ResyncOptions, type ResyncSummary } from '../../src/intake/resync.js';
import { PullRequestEventHandler } from '../../src/intake/webhook-pull-request.js';
import { KubeClient } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import type { RepositoryRef } from '../github-emulator/state.js';
import { testCluster, uniqueName, type Identity } from '../support/test-cluster.js';
import { watchEnvironments, type EnvironmentWatch } from '../support/environment-watch.js';
import { waitFor } from '../support/wait.js';

type Environment = KubeObject & {
  spec: { pullRequest: { number: number; headSha: string; labels: string[] }; repository: { owner: string; name: string } };
};

const cluster = await testCluster();
const gh = await startTestEmulator();
// Every repository of this file lives under this owner; the resync sees only its environments
// (other test files write PreviewEnvironments into the same cluster at the same time).
const owner = uniqueName('resync');
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'resync-test-admin' });

let me: Identity;
let operatorClient: KubeClient;
let informer: Informer<Environment>;
let repoCount = 0;

let watch: EnvironmentWatch<Environment> | undefined;
before(async () => {
  watch = await watchEnvironments<Environment>(cluster, 'resync');
  ({ identity: me, client: operatorClient, informer } = watch);
});

after(async () => {
  await watch?.stop(owner, admin);
  admin.close();
});

const sha = (n: number) => n.toString(16).padStart(40, '0');

function newRepository(pulls: number[], association: 'MEMBER' | 'CONTRIBUTOR' = 'MEMBER'): RepositoryRef {
  const repo = gh.createRepository({ owner, name: `app-${++repoCount}` });
  for (const number of pulls)
    gh.openPullRequest(repo, {
      number,
      author: 'alice',
      authorAssociation: association,
      head: { ref: `feature-${number}`, sha: sha(number) },
    });
  return repo;
}

function tokenClients(): GitHubClients {
  return createGitHubClients({ auth: { type: 'token', token: gh.createToken(uniqueName('operator')) }, baseUrl: gh.url });
}

const mine = () => informer.list().filter((e) => e.spec.repository.owner === owner);
const environmentsOf = (repo: RepositoryRef) => mine().filter((e) => e.spec.repository.name === repo.name);
const numbersOf = (repo: RepositoryRef) =>
  environmentsOf(repo)
    .map((e) => e.spec.pullRequest.number)
    .sort((a, b) => a - b);

function options(clients: GitHubClients, repositories: RepositoryRef[], extra: Partial<ResyncOptions> = {}): ResyncOptions {
  return {
    clients,
    writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) }),
    // This test's repositories only: earlier tests' environments stay in the cluster.
    environments: {
      list: () => mine().filter((e) => repositories.some((r) => r.name === e.spec.repository.name)),
      get: (name) => informer.get(name),
    },
    policy: () => resolvePolicyConfig({ repositories: Object.fromEntries(repositories.map((r) => [`${r.owner}/${r.name}`, {}])) }),
    logger: silentLogger,
    ...extra,
  };
}

/** Waits until the informer shows exactly these pull requests' environments for `repo`. */
async function cacheShows(repo: RepositoryRef, numbers: number[]): Promise<void> {
  await waitFor(`environments of ${repo.name} = ${numbers}`, () => JSON.stringify(numbersOf(repo)) === JSON.stringify(numbers));
}

/** Runs a pass and returns it with the writes the operator's identity made meanwhile. */
async function pass(opts: ResyncOptions) {
  const mark = cluster.audit.mark();
  const summary = await resyncOnce(opts);
  await cluster.audit.settle();
  const writes = cluster.audit.writes(mark, { user: me.username }).map((w) => `${w.verb} ${w.objectRef?.name} ${w.responseStatus?.code}`);
  return { summary, writes };
}

describe('resync', () => {
  it('creates the environments of pull requests whose `opened` never arrived, then an unchanged world costs no write and only 304s', async () => {
    const repo = newRepository([1, 2, 3]);
    const opts = options(tokenClients(), [repo]);

    const first = await pass(opts);
    assert.deepEqual(first.summary.created.sort(), [1, 2, 3].map((n) => environmentName(repo, n)).sort());
    assert.equal(first.writes.length, 3);
    assert.ok(
      first.writes.every((w) => w.startsWith('patch ') && w.endsWith(' 201')),
      first.writes.join('\n'),
    );
    await cacheShows(repo, [1, 2, 3]);
    const env = mine().find((e) => e.spec.pullRequest.number === 2)!;
    assert.equal(env.spec.pullRequest.headSha, sha(2));

    const mark = gh.mark();
    const second = await pass(opts);
    assert.deepEqual(second.writes, [], 'an unchanged world: zero cluster writes');
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => `${r.operationId} ${r.status}`),
      ['pulls/list 304'],
    );
    const { requests, notModified, unchanged, created, updated } = second.summary;
    assert.deepEqual([requests, notModified, unchanged, created.length, updated.length], [1, 1, 3, 0, 0]);

    // A push whose `synchronize` was lost: the spec is updated in place, nothing else is written.
    gh.updatePullRequest(repo, 2, (p) => {
      p.head.sha = sha(0x22);
    });
    const third = await pass(opts);
    assert.deepEqual(third.writes, [`patch ${environmentName(repo, 2)} 200`]);
    assert.deepEqual(third.summary.updated, [environmentName(repo, 2)]);
  });

  /**
   * A pass whose listing says `listed` (that push's `synchronize` was lost) while, as the pass
   * waits for the listing, `writer` accepts the delivery of a newer push, `delivered`.
   */
  async function passRacingADelivery(
    writer: EnvironmentWriter,
    opts: ResyncOptions,
    repo: RepositoryRef,
    listed: string,
    delivered: string,
  ) {
    await pass(opts);
    await cacheShows(repo, [1]);
    const name = environmentName(repo, 1);
    gh.updatePullRequest(repo, 1, (p) => {
      p.head.sha = listed;
    });
    gh.faults.inject({ route: 'pulls/list', repository: repo, times: 1, fault: { kind: 'delay', ms: 3000 } });
    const running = pass(opts);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const spec = mine().find((e) => e.metadata.name === name)!.spec as unknown as PreviewEnvironmentSpec;
    writer.submit(name, {
      op: 'upsert',
      spec: { ...spec, pullRequest: { ...spec.pullRequest, headSha: delivered } },
      deliveredAt: new Date(),
    });
    await writer.idle();
    return { name, ...(await running) };
  }

  it('a delivery that arrives while a pass reads the listing wins over the listing, which is older', async () => {
    const repo = newRepository([1]);
    const writer = new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) });
    // No cache lookup at write time: the writer's own ordering is what keeps the delivery.
    const opts = options(tokenClients(), [repo], { writer });
    const withoutLookup = { ...opts, environments: { list: opts.environments.list } };
    const { name, summary } = await passRacingADelivery(writer, withoutLookup, repo, sha(0x12), sha(0x13));
    assert.equal(summary.superseded, 1, summary.message);
    assert.deepEqual(summary.updated, []);
    assert.match(summary.message, /1 write\(s\) left to newer webhook deliveries/);
    await waitFor("the delivery's head SHA", () => mine().find((e) => e.metadata.name === name)?.spec.pullRequest.headSha === sha(0x13));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(
      mine().find((e) => e.metadata.name === name)?.spec.pullRequest.headSha,
      sha(0x13),
      'the older listing did not put its SHA back',
    );
  });

  it('a delivery another replica wrote while a pass read the listing wins too (seen in the cluster)', async () => {
    const repo = newRepository([1]);
    // The other replica's writer: this pass's writer never hears of its delivery.
    const otherReplica = new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) });
    const { name, summary, writes } = await passRacingADelivery(otherReplica, options(tokenClients(), [repo]), repo, sha(0x14), sha(0x15));
    assert.equal(summary.superseded, 1, summary.message);
    assert.deepEqual(writes, [`patch ${name} 200`], "only the other replica's write");
    assert.equal(mine().find((e) => e.metadata.name === name)?.spec.pullRequest.headSha, sha(0x15));
  });

  it('deletes the environment of a pull request whose `closed` never arrived, after confirming it is closed', async () => {
    const repo = newRepository([1, 2]);
    const opts = options(tokenClients(), [repo]);
    await pass(opts);
    await cacheShows(repo, [1, 2]);

    gh.updatePullRequest(repo, 1, (p) => {
      p.state = 'closed';
      p.closedAt = p.updatedAt;
    });
    const mark = gh.mark();
    const { summary, writes } = await pass(opts);
    assert.deepEqual(
      gh.requestsSince(mark).map((r) => `${r.operationId} ${r.path} ${r.status}`),
      [`pulls/list /repos/${owner}/${repo.name}/pulls?state=open&per_page=100 200`, `pulls/get /repos/${owner}/${repo.name}/pulls/1 200`],
    );
    assert.deepEqual(writes, [`delete ${environmentName(repo, 1)} 200`]);
    assert.deepEqual(summary.deleted, [environmentName(repo, 1)]);
    await cacheShows(repo, [2]);
  });

  it('a pull request GitHub no longer has (404) loses its environment; one still open but missing from the listing keeps it', async () => {
    const repo = newRepository([1, 2]);
    const opts = options(tokenClients(), [repo]);
    await pass(opts);
    await cacheShows(repo, [1, 2]);
    gh.repository(repo).pulls.delete(1);
    const { summary } = await pass(opts);
    assert.deepEqual(summary.deleted, [environmentName(repo, 1)]);
    await cacheShows(repo, [2]);
  });

  for (const [what, fault] of [
    ["fails with 502 (after the client's retries)", { kind: 'server-error', status: 502 }],
    ['answers 403 secondary rate limit with retry-after', { kind: 'secondary-rate-limit', status: 403, retryAfterSeconds: 1 }],
  ] as const) {
    it(`deletes nothing when the listing ${what}; the next good pass does`, { timeout: 60_000 }, async () => {
      const repo = newRepository([1, 2]);
      const clients = createGitHubClients({
        auth: { type: 'token', token: gh.createToken(uniqueName('operator')) },
        baseUrl: gh.url,
        retry: { retries: 1 },
        throttle: { secondaryRateLimitRetries: 1 },
      });
      const opts = options(clients, [repo]);
      await pass(opts);
      await cacheShows(repo, [1, 2]);
      gh.updatePullRequest(repo, 1, (p) => {
        p.state = 'closed';
      });
      gh.updatePullRequest(repo, 2, (p) => {
        p.state = 'closed';
      });

      const injected = gh.faults.inject({ route: 'pulls/list', repository: repo, times: 2, fault });
      const failed = await pass(opts);
      assert.equal(injected.applied, 2, 'the first attempt and the one retry both failed');
      assert.deepEqual(failed.writes, [], 'nothing deleted');
      assert.deepEqual([failed.summary.listedRepositories, failed.summary.deleted], [0, []]);
      assert.equal(failed.summary.errors[0]?.operation, 'list');
      assert.equal(failed.summary.rateLimited, fault.kind === 'secondary-rate-limit');
      assert.deepEqual(numbersOf(repo), [1, 2]);

      const good = await pass(opts);
      assert.deepEqual(good.summary.deleted.sort(), [environmentName(repo, 1), environmentName(repo, 2)].sort());
    });
  }

  it('deletes nothing in a pass that hit a rate limit, not even in repositories listed without one', async () => {
    const listed = newRepository([1]);
    const limited = newRepository([1]);
    const clients = createGitHubClients({
      auth: { type: 'token', token: gh.createToken(uniqueName('operator')) },
      baseUrl: gh.url,
      throttle: { secondaryRateLimitRetries: 0 },
    });
    const opts = options(clients, [listed, limited], { concurrency: 1 });
    await pass(opts);
    await cacheShows(listed, [1]);
    await cacheShows(limited, [1]);
    gh.updatePullRequest(listed, 1, (p) => {
      p.state = 'closed';
    });

    gh.faults.inject({
      route: 'pulls/list',
      repository: limited,
      times: 1,
      fault: { kind: 'secondary-rate-limit', status: 403, retryAfterSeconds: 1 },
    });
    const { summary, writes } = await pass(opts);
    assert.equal(summary.rateLimited, true, summary.message);
    assert.equal(summary.listedRepositories, 1);
    assert.deepEqual(writes, []);
    assert.deepEqual(summary.deleted, []);
    assert.deepEqual(summary.skippedDeletions, [environmentName(listed, 1)]);
    assert.equal(summary.deletionCapReached, false);
    assert.match(summary.message, /rate limited by GitHub: 1 deletion\(s\) held back/);
    assert.deepEqual(numbersOf(listed), [1]);
  });

  it('caps deletions per pass and reports it; later passes finish the job', async () => {
    const repo = newRepository([1, 2, 3, 4, 5]);
    const opts = options(tokenClients(), [repo], { maxDeletionsPerPass: 2 });
    await pass(opts);
    await cacheShows(repo, [1, 2, 3, 4, 5]);
    for (const n of [1, 2, 3, 4, 5])
      gh.updatePullRequest(repo, n, (p) => {
        p.state = 'closed';
      });

    const capped = await pass(opts);
    assert.equal(capped.writes.length, 2);
    assert.equal(capped.summary.deleted.length, 2);
    assert.equal(capped.summary.skippedDeletions.length, 3);
    assert.equal(capped.summary.deletionCapReached, true);
    assert.match(
      capped.summary.message,
      /deletion cap reached: 3 more environment\(s\) of closed pull requests wait for the next pass \(maxDeletionsPerPass 2\)/,
    );
    await waitFor('3 left', () => numbersOf(repo).length === 3);

    const second = await pass(opts);
    const counts = ({ summary }: typeof second) => [summary.deleted.length, summary.skippedDeletions.length, summary.deletionCapReached];
    assert.deepEqual(counts(second), [2, 1, true]);
    await waitFor('1 left', () => numbersOf(repo).length === 1);
    const third = await pass(opts);
    assert.deepEqual(counts(third), [1, 0, false]);
  });

  it('a deletion that failed transiently still counts against the cap (the writer goes on with it)', async () => {
    const repo = newRepository([1, 2, 3]);
    const real = new KubeEnvironmentStore(operatorClient);
    const flaky = {
      upsert: real.upsert.bind(real),
      delete: () => Promise.reject(new TransientError('the API server is overloaded', 503, 'ServiceUnavailable')),
    };
    // The writer goes on retrying, a minute apart, until the process ends.
    const writer = new EnvironmentWriter({ store: flaky, initialDelayMs: 60_000, maxDelayMs: 60_000 });
    const opts = options(tokenClients(), [repo], { maxDeletionsPerPass: 1, writer });
    await pass(opts);
    await cacheShows(repo, [1, 2, 3]);
    for (const n of [1, 2, 3])
      gh.updatePullRequest(repo, n, (p) => {
        p.state = 'closed';
      });
    const { summary } = await pass(opts);
    assert.equal(summary.errors.length, 1, summary.message);
    assert.deepEqual([summary.deleted.length, summary.skippedDeletions.length, summary.deletionCapReached], [0, 2, true]);
  });
});

describe('the resync runnable', () => {
  it('waits for the cache, passes at once and then every interval, and stops when aborted', async () => {
    const repo = newRepository([1]);
    const summaries: ResyncSummary[] = [];
    const runnable = createResyncRunnable({
      ...options(tokenClients(), [repo]),
      environments: { list: () => environmentsOf(repo), waitForSync: (signal) => informer.waitForSync(signal) },
      intervalMs: 100,
      onPass: (summary) => void summaries.push(summary),
    });
    assert.equal(runnable.name, 'pull-request-resync');
    const abort = new AbortController();
    const running = runnable.start(abort.signal);
    await waitFor('three passes', () => summaries.length >= 3);
    abort.abort();
    await running;
    const passes = summaries.length;
    assert.deepEqual(summaries[0]!.created, [environmentName(repo, 1)]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(summaries.length, passes, 'no pass after the abort');
  });
});

describe('resync and untrusted pull requests', () => {
  it('never deploys a commit pushed after the approval, even when removing the approval label failed', async () => {
    const repo = gh.createRepository({ owner, name: `app-${++repoCount}` });
    const fork = gh.forkRepository(repo, 'mallory');
    gh.openPullRequest(repo, {
      number: 7,
      author: 'mallory',
      authorAssociation: 'CONTRIBUTOR',
      head: { ref: 'patch-7', sha: sha(0x70), repository: fork },
      labels: ['preview-approved'],
    });
    const clients = tokenClients();
    // One writer for the webhook and the resync, as `run` wires them.
    const writer = new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) });
    const opts = options(clients, [repo], { writer });
    const client = await clients.forRepository(repo);
    const prJson = async () => (await client.rest.pulls.get({ owner, repo: repo.name, pull_number: 7 })).data as unknown;

    // The webhook path as wired in production; GitHub keeps refusing to remove the label.
    gh.faults.inject({ route: 'issues/remove-label', repository: repo, times: 1000, fault: { kind: 'server-error', status: 500 } });
    const approvals = new ApprovalRevoker({
      removeLabel: createLabelRemover(
        createGitHubClients({
          auth: { type: 'token', token: gh.createToken('operator-labels') },
          baseUrl: gh.url,
          retry: { enabled: false },
        }),
      ),
      attempts: 2,
      initialDelayMs: 10,
    });
    const handler = new PullRequestEventHandler({ writer, policy: opts.policy, approvals });

    // A maintainer's label on the fork's commit 0x70: the `labeled` webhook deploys it.
    const maintainer = { login: 'maintainer', type: 'User' };
    assert.equal(
      handler.handle('labeled', { pull_request: await prJson(), label: { name: 'preview-approved' }, sender: maintainer }).op,
      'upsert',
    );
    await writer.idle();
    await cacheShows(repo, [7]);
    const approved = await pass(opts);
    assert.deepEqual(approved.writes, [], 'the approved commit is what runs: the resync keeps it');
    assert.equal(approved.summary.unconfirmedApprovals, 0);

    // A new push: the `synchronize` webhook deletes the environment and tries to remove the label, which fails.
    gh.updatePullRequest(repo, 7, (p) => {
      p.head.sha = sha(0x71);
    });
    const sync = handler.handle('synchronize', { pull_request: await prJson() });
    assert.deepEqual([sync.result, sync.op, sync.approvalRevoked], ['accepted', 'delete', true]);
    await writer.idle();
    await approvals.idle();
    assert.equal(approvals.failures, 1);
    assert.deepEqual(
      gh.pullRequest(repo, 7).labels.map((l) => l.name),
      ['preview-approved'],
      'the label is still on the pull request',
    );
    await cacheShows(repo, []);

    const resync = await pass(opts);
    assert.deepEqual(resync.writes, [], 'the unapproved commit is not deployed');
    assert.equal(resync.summary.unconfirmedApprovals, 1);
    assert.match(resync.summary.message, /1 untrusted pull request\(s\) carry an approval label not confirmed for their head commit/);

    // Had the `synchronize` been lost too, the environment at the old commit goes instead of moving to the new one.
    // (Here it was delivered, and took the approval away: a maintainer approves the old commit again to set the scene.)
    const pr = (await prJson()) as { head: object };
    const atOld = {
      pull_request: { ...pr, head: { ...pr.head, sha: sha(0x70) } },
      label: { name: 'preview-approved' },
      sender: { login: 'maintainer', type: 'User' },
    };
    assert.equal(handler.handle('labeled', atOld).op, 'upsert');
    await writer.idle();
    await waitFor('the environment at the approved commit', () => environmentsOf(repo)[0]?.spec.pullRequest.headSha === sha(0x70));
    const lostSync = await pass(opts);
    assert.deepEqual(lostSync.writes, [`delete ${environmentName(repo, 7)} 200`]);
    await approvals.close();
  });
});
