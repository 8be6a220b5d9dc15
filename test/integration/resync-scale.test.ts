// The resync over one repository with 200 open pull requests, against the real API server
// and the emulator: what a pass costs in GitHub requests, rate limit, cluster writes and
// time, cold and warm. The figures are printed as test diagnostics.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { KubeEnvironmentStore } from '../../src/intake/environment-store.js';
import { EnvironmentWriter } from '../../src/intake/environment-writer.js';
import { createGitHubClients } from '../../src/github/octokit-factory.js';
import { resyncOnce, type ResyncOptions } from '../../src/intake/resync.js';
import { KubeClient } from '../../src/kube/client.js';
import { Informer } from '../../src/kube/informer.js';
import type { KubeObject } from '../../src/kube/kube-object.js';
import { silentLogger } from '../../src/kube/logger.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { testCluster, uniqueName, type Identity } from '../support/test-cluster.js';
import { watchEnvironments, type EnvironmentWatch } from '../support/environment-watch.js';
import { waitFor } from '../support/wait.js';

type Environment = KubeObject & { spec: { repository: { owner: string; name: string }; pullRequest: { number: number } } };

const pullRequests = 200;
const cluster = await testCluster();
const gh = await startTestEmulator();
const owner = uniqueName('scale');
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'resync-scale-admin' });
let me: Identity;
let operatorClient: KubeClient;
let informer: Informer<Environment>;

let watch: EnvironmentWatch<Environment> | undefined;
before(async () => {
  watch = await watchEnvironments<Environment>(cluster, 'resync-scale');
  ({ identity: me, client: operatorClient, informer } = watch);
});

after(async () => {
  await watch?.stop(owner, admin);
  admin.close();
});

it(
  `a pass over ${pullRequests} open pull requests: cold, then warm (all 304, no write), then one closed`,
  { timeout: 180_000 },
  async (t) => {
    const repo = gh.createRepository({ owner, name: 'monorepo' });
    for (let n = 1; n <= pullRequests; n++) {
      gh.openPullRequest(repo, {
        number: n,
        author: 'alice',
        authorAssociation: 'MEMBER',
        head: { ref: `feature-${n}`, sha: n.toString(16).padStart(40, 'a') },
      });
    }
    const login = uniqueName('operator');
    const clients = createGitHubClients({ auth: { type: 'token', token: gh.createToken(login) }, baseUrl: gh.url });
    const mine = () => informer.list().filter((e) => e.spec.repository.owner === owner);
    const options: ResyncOptions = {
      clients,
      writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(operatorClient) }),
      environments: { list: mine },
      policy: () => resolvePolicyConfig({ repositories: { [`${owner}/monorepo`]: {} } }),
      logger: silentLogger,
    };
    const rateUsed = () => clients.rateLimits.snapshots().find((s) => s.client === 'token')?.used ?? 0;

    const measure = async (label: string) => {
      const mark = gh.mark();
      const audit = cluster.audit.mark();
      const used = rateUsed();
      const summary = await resyncOnce(options);
      await cluster.audit.settle();
      const writes = cluster.audit.writes(audit, { user: me.username }).length;
      const requests = gh.requestsSince(mark);
      const figures = {
        requests: requests.length,
        notModified: requests.filter((r) => r.status === 304).length,
        rateLimitUsed: rateUsed() - used,
        clusterWrites: writes,
        created: summary.created.length,
        deleted: summary.deleted.length,
        ms: summary.durationMs,
      };
      t.diagnostic(`${label}: ${JSON.stringify(figures)}`);
      return { summary, figures };
    };

    const cold = await measure('cold');
    assert.deepEqual([cold.figures.requests, cold.figures.created, cold.figures.clusterWrites], [2, pullRequests, pullRequests]);
    await waitFor('the cache holds every environment', () => mine().length === pullRequests);

    const warm = await measure('warm');
    assert.deepEqual(
      [warm.figures.requests, warm.figures.notModified, warm.figures.rateLimitUsed, warm.figures.clusterWrites, warm.summary.unchanged],
      [2, 2, 0, 0, pullRequests],
    );
    assert.equal(warm.summary.notModified, 2);

    gh.updatePullRequest(repo, 77, (p) => {
      p.state = 'closed';
    });
    const oneClosed = await measure('one closed');
    assert.deepEqual([oneClosed.figures.requests, oneClosed.figures.deleted, oneClosed.figures.clusterWrites], [3, 1, 1]);
  },
);
