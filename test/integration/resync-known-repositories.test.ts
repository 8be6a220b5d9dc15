// What a resync pass knows and what it leaves alone, against the real API server and the GitHub
// emulator: with a GitHub App it reads every repository the App's installations cover, so a
// repository's very first pull request is found although its `opened` delivery was lost and no
// environment or policy entry names the repository; with a token it reads the repositories the
// policy names. An environment already being deleted (its finalizer still at work) is neither
// deleted again nor counted against `maxDeletionsPerPass`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createGitHubClients, type GitHubClients } from '../../src/github/octokit-factory.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { resyncOnce, type ResyncOptions } from '../../src/intake/resync.js';
import { KubeClient } from '../../src/kube/client.js';
import type { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import type { PolicyConfigInput } from '../../src/policy/policy-config.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import type { RepositoryRef } from '../github-emulator/state.js';
import { watchEnvironments, type EnvironmentWatch } from '../support/environment-watch.js';
import { testCluster, uniqueName, type Identity } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

type Environment = KubeObject & { spec: { pullRequest: { number: number }; repository: { owner: string; name: string } } };

const cluster = await testCluster();
const gh = await startTestEmulator();
const owner = uniqueName('known');
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'resync-known-test-admin' });
/** Holds an environment in Terminating, as the controller's finalizer does while it tears the namespace down. */
const holdFinalizer = 'test.preview.alien6.io/hold';

let watch: EnvironmentWatch<Environment> | undefined;
let me: Identity;
let operatorClient: KubeClient;
let informer: Informer<Environment>;
let repoCount = 0;

before(async () => {
  watch = await watchEnvironments<Environment>(cluster, 'resync-known');
  ({ identity: me, client: operatorClient, informer } = watch);
});

after(async () => {
  for (const env of mine()) {
    if (env.metadata.finalizers?.length) await admin.patch(ref(env), 'merge', { metadata: { finalizers: null } }).catch(() => {});
  }
  await watch?.stop(owner, admin);
  admin.close();
});

const sha = (n: number) => n.toString(16).padStart(40, '0');
const ref = (env: KubeObject) => ({ ...previewEnvironmentKind, name: env.metadata.name! });
const mine = () => informer.list().filter((e) => e.spec.repository.owner === owner);
const numbersOf = (repo: RepositoryRef) =>
  mine()
    .filter((e) => e.spec.repository.name === repo.name)
    .map((e) => e.spec.pullRequest.number)
    .sort((a, b) => a - b);

function newRepository(pulls: number[]): RepositoryRef {
  const repo = gh.createRepository({ owner, name: `app-${++repoCount}` });
  for (const number of pulls)
    gh.openPullRequest(repo, { number, author: 'alice', authorAssociation: 'MEMBER', head: { ref: `f-${number}`, sha: sha(number) } });
  return repo;
}

function options(
  clients: GitHubClients,
  policy: PolicyConfigInput,
  repos: RepositoryRef[],
  extra: Partial<ResyncOptions> = {},
): ResyncOptions {
  const ours = () => mine().filter((e) => repos.some((r) => r.name === e.spec.repository.name));
  return {
    clients,
    writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) }),
    // This test's environments only: other tests and test files write PreviewEnvironments into the same cluster.
    environments: { list: ours, get: (name) => informer.get(name) },
    policy: () => resolvePolicyConfig(policy),
    logger: silentLogger,
    ...extra,
  };
}

async function pass(opts: ResyncOptions) {
  const mark = cluster.audit.mark();
  const summary = await resyncOnce(opts);
  await cluster.audit.settle();
  const writes = cluster.audit.writes(mark, { user: me.username }).map((w) => `${w.verb} ${w.objectRef?.name} ${w.responseStatus?.code}`);
  return { summary, writes };
}

describe('the repositories a pass reads', () => {
  it("a GitHub App: a repository's first pull request, its `opened` lost, is found in one pass", async () => {
    const repo = newRepository([1]);
    const elsewhere = gh.createRepository({ owner, name: `app-${++repoCount}` });
    gh.openPullRequest(elsewhere, { number: 1, author: 'alice', authorAssociation: 'MEMBER', head: { ref: 'f-1', sha: sha(9) } });
    const app = gh.createApp();
    gh.installApp(app.id, [repo]);
    const clients = createGitHubClients({ auth: { type: 'app', appId: app.id, privateKey: app.privateKey }, baseUrl: gh.url });

    // No environment and no policy entry names the repository: only the installation does.
    const mark = gh.mark();
    const { summary, writes } = await pass(options(clients, {}, [repo]));
    assert.deepEqual(summary.created, [environmentName(repo, 1)], summary.message);
    assert.deepEqual(writes, [`patch ${environmentName(repo, 1)} 201`]);
    assert.equal(summary.repositories, 1, "the installation's repository, not one the App cannot see");
    const operations = gh.requestsSince(mark).map((r) => r.operationId);
    assert.ok(operations.includes('apps/list-installations') && operations.includes('apps/list-repos-accessible-to-installation'));
    assert.ok(!operations.includes('apps/get-repo-installation'), 'the installation of each repository came with the listing');
    await waitFor('the environment in the cache', () => numbersOf(repo).length === 1);

    // Previews disabled (an allow-list that does not name it): an installation's repository is not read.
    const other = newRepository([1]);
    gh.installApp(app.id, [other]);
    const quiet = await pass(options(clients, { enabled: false }, [other]));
    assert.deepEqual([quiet.summary.repositories, quiet.summary.created], [0, []], quiet.summary.message);
  });

  it('a token: the repositories the policy names (it cannot list what it covers)', async () => {
    const repo = newRepository([1]);
    const clients = createGitHubClients({ auth: { type: 'token', token: gh.createToken(uniqueName('operator')) }, baseUrl: gh.url });
    const unnamed = await pass(options(clients, {}, [repo]));
    assert.deepEqual(unnamed.summary.created, []);
    const named = await pass(options(clients, { repositories: { [`${owner}/${repo.name}`]: {} } }, [repo]));
    assert.deepEqual(named.summary.created, [environmentName(repo, 1)]);
  });
});

describe('environments already being deleted', () => {
  it('are not deleted again and do not count against maxDeletionsPerPass', async () => {
    const repo = newRepository([1, 2, 3]);
    const clients = createGitHubClients({ auth: { type: 'token', token: gh.createToken(uniqueName('operator')) }, baseUrl: gh.url });
    const opts = options(clients, { repositories: { [`${owner}/${repo.name}`]: {} } }, [repo], { maxDeletionsPerPass: 1 });
    await pass(opts);
    await waitFor('three environments', () => numbersOf(repo).length === 3);
    // #1 and #2 are being deleted (a finalizer holds them); #3 is not.
    for (const number of [1, 2]) {
      const name = environmentName(repo, number);
      await admin.patch({ ...previewEnvironmentKind, name }, 'merge', { metadata: { finalizers: [holdFinalizer] } });
      await admin.delete({ ...previewEnvironmentKind, name });
    }
    await waitFor('both terminating in the cache', () => mine().filter((e) => e.metadata.deletionTimestamp).length === 2);
    for (const number of [1, 2, 3])
      gh.updatePullRequest(repo, number, (p) => {
        p.state = 'closed';
      });

    const mark = gh.mark();
    const { summary, writes } = await pass(opts);
    assert.deepEqual(summary.deleted, [environmentName(repo, 3)], summary.message);
    assert.deepEqual(writes, [`delete ${environmentName(repo, 3)} 200`], 'the terminating ones were not deleted again');
    assert.equal(summary.alreadyDeleting, 2);
    assert.equal(summary.deletionCapReached, false, summary.message);
    assert.deepEqual(summary.skippedDeletions, []);
    assert.match(summary.message, /2 already being deleted/);
    const asked = gh
      .requestsSince(mark)
      .filter((r) => r.operationId === 'pulls/get')
      .map((r) => r.path);
    assert.deepEqual(asked, [`/repos/${owner}/${repo.name}/pulls/3`], 'GitHub is asked only about the one to delete');
  });
});
