// What the chaos run acts on and looks at: a local control plane of its own (with its audit log),
// the operator's CRDs, the GitHub emulator with an App installed on the run's repositories (each a
// real git repository whose `.preview/` deploys an Algorithm and a Database), and the observation
// of the end state that chaos-verdict.ts judges.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { KubeClient, type KubeObject } from '../../src/kube/index.js';
import { startCluster, type Cluster } from '../cluster/start-cluster.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { GitHubEmulator } from '../github-emulator/emulator.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { previewYaml } from '../support/preview-yaml.js';
import type { PullRequestRef } from './chaos-plan.js';
import type { ChaosObservation, ObservedPullRequest } from './chaos-verdict.js';

export const leaseNamespace = 'preview-operator';

export interface ChaosWorld {
  cluster: Cluster;
  gh: GitHubEmulator;
  admin: KubeClient;
  repos: PullRequestDriver[];
  /** The files `run` is configured with. */
  files: { appKey: string; webhookSecret: string };
  appId: number;
  stop(): Promise<void>;
}

export async function startChaosWorld(repositories: number, workDir: string, log: (line: string) => void): Promise<ChaosWorld> {
  const cluster = await startCluster({ log, nodes: 4 });
  try {
    await installCrds(cluster.kubeConfig, operatorCrdFiles);
    const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-chaos', userAgent: 'preview-chaos' });
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: leaseNamespace } });
    // GitHub's rules checked on every request; a rate limit the run never reaches.
    const gh = await GitHubEmulator.start({ rateLimit: { limit: 1_000_000, windowSeconds: 3600 } });
    const app = gh.createApp({ slug: 'preview-operator-chaos' });
    const repos: PullRequestDriver[] = [];
    for (let r = 0; r < repositories; r++) {
      repos.push(
        await PullRequestDriver.create(gh, {
          owner: 'chaos',
          name: `shop-${r}`,
          webhookSecret: 'chaos-webhook-secret',
          initialFiles: { 'README.md': `# shop ${r}\n`, '.preview/preview.yaml': previewYaml() },
        }),
      );
    }
    gh.installApp(
      app.id,
      repos.map((r) => r.repository),
    );
    mkdirSync(workDir, { recursive: true });
    const files = { appKey: path.join(workDir, 'app.pem'), webhookSecret: path.join(workDir, 'webhook-secret') };
    writeFileSync(files.appKey, app.privateKey);
    writeFileSync(files.webhookSecret, 'chaos-webhook-secret\n');
    return {
      cluster,
      gh,
      admin,
      repos,
      files,
      appId: app.id,
      async stop() {
        admin.close();
        for (const repo of repos) await repo.cleanup();
        await gh.close().finally(() => cluster.stop());
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

type Environment = KubeObject<{ pullRequest: { headSha: string } }, { phase?: string; deployedSha?: string }>;

/** The end state: every pull request the run made (GitHub's side), every PreviewEnvironment and preview namespace. */
export async function observe(world: ChaosWorld, pullRequests: readonly PullRequestRef[]): Promise<ChaosObservation> {
  const [environments, namespaces] = await Promise.all([
    world.admin.list<Environment>(previewEnvironmentKind),
    world.admin.list({ apiVersion: 'v1', kind: 'Namespace' }, { labelSelector: 'preview.alien6.io/environment' }),
  ]);
  return {
    pullRequests: pullRequests.map((ref) => observePullRequest(world, ref)),
    environments: environments.items.map((e) => ({
      name: e.metadata.name!,
      headSha: e.spec?.pullRequest.headSha,
      phase: e.status?.phase,
      deployedSha: e.status?.deployedSha,
    })),
    namespaces: namespaces.items.map((n) => n.metadata.name!),
  };
}

function observePullRequest(world: ChaosWorld, ref: PullRequestRef): ObservedPullRequest {
  const repo = world.repos[ref.repository]!;
  const pr = world.gh.pullRequest(repo.repository, ref.number);
  const marker = `<!-- preview-operator:pr-${ref.number} -->`;
  const deploymentsBySha: Record<string, number> = {};
  for (const d of world.gh.deployments(repo.repository, { environment: `preview/pr-${ref.number}` })) {
    deploymentsBySha[d.sha] = (deploymentsBySha[d.sha] ?? 0) + 1;
  }
  return {
    key: `${repo.repository.owner}/${repo.repository.name}#${ref.number}`,
    environment: environmentName(repo.repository, ref.number),
    open: pr.state === 'open',
    headSha: pr.head.sha,
    comments: world.gh.comments(repo.repository, ref.number).filter((c) => c.body.startsWith(marker)).length,
    deploymentsBySha,
  };
}
