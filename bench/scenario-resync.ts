// Scenario 6, resync with nothing changed: one repository with N open pull requests whose
// environments exist (a first, cold pass creates them), then a pass over the unchanged world:
// GitHub requests, how many were 304, cluster writes, time. Both passes are reported.
import { randomBytes } from 'node:crypto';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../src/intake/environment-store.js';
import { EnvironmentWriter } from '../src/intake/environment-writer.js';
import { createGitHubClients } from '../src/github/octokit-factory.js';
import { resyncOnce, type ResyncOptions } from '../src/intake/resync.js';
import { KubeClient } from '../src/kube/client.js';
import { Informer } from '../src/kube/informer.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import { silentLogger } from '../src/kube/logger.js';
import { resolvePolicyConfig } from '../src/policy/policy-validation.js';
import type { BenchEnvironment } from './bench-environment.js';
import type { StepResult } from './scenario-plan.js';

type Environment = KubeObject & { spec: { repository: { owner: string; name: string } } };

export async function resyncUnchanged(env: BenchEnvironment, options: { pullRequests: number }): Promise<StepResult> {
  const { gh, cluster } = env;
  const owner = `resync-${randomBytes(3).toString('hex')}`;
  const repo = gh.createRepository({ owner, name: 'monorepo' });
  for (let n = 1; n <= options.pullRequests; n++) {
    gh.openPullRequest(repo, { number: n, author: 'alice', authorAssociation: 'MEMBER', head: { ref: `feature-${n}`, sha: n.toString(16).padStart(40, 'a') } });
  }
  const client = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-operator', userAgent: 'bench-resync' });
  const informer = new Informer<Environment>(client, previewEnvironmentKind, { logger: silentLogger });
  informer.start();
  await informer.waitForSync();
  const mine = () => informer.list().filter((e) => e.spec?.repository?.owner === owner);
  const clients = createGitHubClients({ auth: { type: 'token', token: gh.createToken(`${owner}-operator`) }, baseUrl: gh.url, throttle: { enabled: false } });
  const resync: ResyncOptions = {
    clients,
    writer: new EnvironmentWriter({ store: new KubeEnvironmentStore(client) }),
    environments: { list: mine },
    policy: () => resolvePolicyConfig({ repositories: { [`${owner}/monorepo`]: {} } }),
    logger: silentLogger,
  };
  const pass = async () => {
    const mark = gh.mark();
    const audit = cluster.audit.mark();
    const t = performance.now();
    const summary = await resyncOnce(resync);
    const ms = performance.now() - t;
    await cluster.audit.settle();
    const requests = gh.requestsSince(mark);
    return {
      summary, ms,
      requests: requests.length,
      notModified: requests.filter((r) => r.status === 304).length,
      writes: cluster.audit.writes(audit, { userAgent: 'bench-resync' }).length,
    };
  };
  try {
    const cold = await pass();
    const deadline = Date.now() + 60_000;
    while (mine().length < options.pullRequests && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const warm = await pass();
    return {
      scenario: 6,
      title: 'Resync, nothing changed',
      figures: [
        { scenario: 6, name: `unchanged pass over ${options.pullRequests} PRs: time`, value: warm.ms, unit: 'ms' },
        { scenario: 6, name: 'unchanged pass: GitHub requests', value: warm.requests, unit: 'count' },
        { scenario: 6, name: 'unchanged pass: of which 304', value: warm.notModified, unit: 'count' },
        { scenario: 6, name: 'unchanged pass: cluster writes', value: warm.writes, unit: 'count', target: { op: '<=', value: 0, text: 'zero writes (design rule)' } },
        { scenario: 6, name: 'cold pass (creates every environment): time', value: cold.ms, unit: 'ms' },
        { scenario: 6, name: 'cold pass: GitHub requests', value: cold.requests, unit: 'count' },
        { scenario: 6, name: 'cold pass: cluster writes', value: cold.writes, unit: 'count' },
      ],
      samples: {},
      notes: [
        `One repository, ${options.pullRequests} open PRs, token auth, conditional requests on (ETag cache). Cold pass: ${cold.requests} requests (${cold.notModified} × 304), ${cold.writes} cluster writes, ${cold.summary.created.length} created, ${cold.ms.toFixed(0)} ms. Unchanged pass: ${warm.requests} requests (${warm.notModified} × 304), ${warm.writes} writes, ${warm.summary.unchanged} unchanged, ${warm.ms.toFixed(0)} ms.`,
      ],
    };
  } finally {
    await informer.stop();
    for (const e of mine()) await client.delete({ ...previewEnvironmentKind, name: e.metadata.name! }).catch(() => {});
    client.close();
  }
}
