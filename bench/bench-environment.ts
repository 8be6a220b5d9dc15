// The parts every step runs against: one local control plane (with its audit log), the
// operator's CRDs installed, and one GitHub emulator — all on 127.0.0.1.
import { installCrds, operatorCrdFiles } from '../test/fixtures/crds/install-crds.js';
import { startCluster, type Cluster } from '../test/cluster/start-cluster.js';
import { GitHubEmulator } from '../test/github-emulator/emulator.js';
import { KubeClient } from '../src/kube/client.js';

export interface BenchEnvironment {
  cluster: Cluster;
  gh: GitHubEmulator;
  /** Admin client for the bench's own reads and clean-up (its writes are `preview-bench`). */
  admin: KubeClient;
  stop(): Promise<void>;
}

/** `environments`: the most the step deploys at once (simulated nodes of 64 CPUs are added for them). */
export async function startBenchEnvironment(log: (line: string) => void, environments = 200): Promise<BenchEnvironment> {
  // An environment's pods request about 0.4 CPU: 64-CPU nodes, enough that none stays Pending.
  const cluster = await startCluster({ log, nodes: Math.max(4, Math.ceil(environments / 50)) });
  try {
    // No cert-manager: previews are served over plain HTTP, as on a cluster without it.
    await installCrds(cluster.kubeConfig, operatorCrdFiles);
    // No OpenAPI checks (GitHub spends no CPU on them on the operator's cores); the rate limit is not measured.
    const gh = await GitHubEmulator.start({ checkContract: false, rateLimit: { limit: 1_000_000, windowSeconds: 3600 } });
    const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-bench', userAgent: 'preview-bench' });
    return {
      cluster,
      gh,
      admin,
      async stop() {
        admin.close();
        await gh.close().finally(() => cluster.stop());
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
