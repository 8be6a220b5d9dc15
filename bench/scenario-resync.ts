// Scenario 6, resync with nothing changed: one repository with N open pull requests whose
// environments exist (a first, cold pass creates them), then a pass over the unchanged world:
// GitHub requests (how many 304), cluster writes (the design rule: none), time.
import { randomBytes } from 'node:crypto';
import { createGitHubClients } from '../src/github/octokit-factory.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../src/intake/environment-store.js';
import { EnvironmentWriter } from '../src/intake/environment-writer.js';
import { resyncOnce, type ResyncOptions } from '../src/intake/resync.js';
import { KubeClient } from '../src/kube/client.js';
import { Informer } from '../src/kube/informer.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import { silentLogger } from '../src/kube/logger.js';
import { resolvePolicyConfig } from '../src/policy/policy-validation.js';
import { waitFor } from '../test/support/wait.js';
import type { BenchEnvironment } from './bench-environment.js';
import { atMost, figure, type Measured } from './figures.js';

type Environment = KubeObject & { spec: { repository: { owner: string } } };

export async function resyncUnchanged(env: BenchEnvironment, options: { pullRequests: number }): Promise<Measured> {
  const { gh, cluster } = env;
  const owner = `resync-${randomBytes(3).toString('hex')}`;
  const repo = gh.createRepository({ owner, name: 'monorepo' });
  for (let n = 1; n <= options.pullRequests; n++) {
    const head = { ref: `f-${n}`, sha: n.toString(16).padStart(40, 'a') };
    gh.openPullRequest(repo, { number: n, author: 'alice', authorAssociation: 'MEMBER', head });
  }
  const client = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-operator', userAgent: 'bench-resync' });
  const informer = new Informer<Environment>(client, previewEnvironmentKind, { logger: silentLogger });
  informer.start();
  await informer.waitForSync();
  const mine = () => informer.list().filter((e) => e.spec?.repository?.owner === owner);
  const token = gh.createToken(`${owner}-operator`);
  const resync: ResyncOptions = {
    clients: createGitHubClients({ auth: { type: 'token', token }, baseUrl: gh.url, throttle: { enabled: false } }),
    writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(client) }),
    environments: { list: mine },
    policy: () => resolvePolicyConfig({ repositories: { [`${owner}/monorepo`]: {} } }),
    logger: silentLogger,
  };
  const pass = async () => {
    const [mark, audit, t] = [gh.mark(), cluster.audit.mark(), performance.now()];
    await resyncOnce(resync);
    const ms = performance.now() - t;
    await cluster.audit.settle();
    const requests = gh.requestsSince(mark);
    const writes = cluster.audit.writes(audit, { userAgent: 'bench-resync' }).length;
    return { ms, requests: requests.length, notModified: requests.filter((r) => r.status === 304).length, writes };
  };
  try {
    const cold = await pass();
    await waitFor('every environment written', () => mine().length >= options.pullRequests, { timeoutMs: 60_000, intervalMs: 100 });
    const warm = await pass();
    return {
      figures: [
        figure(6, `unchanged pass over ${options.pullRequests} PRs: time`, warm.ms, 'ms'),
        figure(6, 'unchanged pass: GitHub requests (not 304)', warm.requests - warm.notModified, 'count', atMost(0)),
        figure(6, 'unchanged pass: cluster writes', warm.writes, 'count', atMost(0)),
      ],
      notes: [`Cold pass (creates every environment): ${cold.requests} GitHub requests, ${cold.writes} writes, ${cold.ms.toFixed(0)} ms.`],
    };
  } finally {
    await informer.stop();
    await env.admin.request({ method: 'DELETE', path: '/apis/preview.alien6.io/v1alpha1/previewenvironments' }).catch(() => {});
    client.close();
  }
}
