// The parts every step runs against: one local control plane (with its audit log; for the TLS step
// cert-manager and its test CA, else previews are plain HTTP), the operator's CRDs installed, and one
// GitHub emulator — all on 127.0.0.1.
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
export async function startBenchEnvironment(log: (line: string) => void, environments: number, certManager = false) {
  // An environment's pods request about 0.4 CPU: 64-CPU nodes, enough that none stays Pending.
  const cluster = await startCluster({ log, nodes: Math.max(4, Math.ceil(environments / 50)), certManager });
  try {
    await installCrds(cluster.kubeConfig, operatorCrdFiles);
    // No OpenAPI checks (GitHub spends no CPU on them on the operator's cores); the rate limit is not measured.
    const gh = await GitHubEmulator.start({ checkContract: false, rateLimit: { limit: 1_000_000, windowSeconds: 3600 } });
    const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-bench', userAgent: 'preview-bench' });
    return { cluster, gh, admin, stop: () => (admin.close(), gh.close().finally(() => cluster.stop())) } satisfies BenchEnvironment;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
