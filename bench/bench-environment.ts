// The parts every scenario runs against: one local control plane (with its audit log), the
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
  log(line: string): void;
  stop(): Promise<void>;
}

export async function startBenchEnvironment(log: (line: string) => void): Promise<BenchEnvironment> {
  // The burst's 200 environments request ~75 CPUs (an Algorithm and a Database each); one
  // simulated node has 64, so with one node a quarter of the pods would stay Pending forever.
  const cluster = await startCluster({ log, nodes: 4 });
  try {
    // cert-manager is not installed: previews are served over plain HTTP, as on a cluster without it.
    await installCrds(cluster.kubeConfig, operatorCrdFiles);
    // The emulator's OpenAPI checks are the tests' (GitHub spends no CPU on them on the operator's cores).
    // A full run's burst step makes about 6,000 GitHub requests with one token within the hour
    // (scenario 2, two bursts of 200, the teardown): at GitHub's 5,000 an hour the profiled pass
    // ran out part-way and measured an operator whose reports failed. The limit is not measured here.
    const gh = await GitHubEmulator.start({ checkContract: false, rateLimit: { limit: 100_000, windowSeconds: 3600 } });
    const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'preview-bench', userAgent: 'preview-bench' });
    return {
      cluster, gh, admin, log,
      async stop() {
        admin.close();
        try {
          await gh.close();
        } finally {
          await cluster.stop();
        }
      },
    };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}
