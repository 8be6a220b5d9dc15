// `npm run cluster`: a local control plane for poking at by hand, up until Ctrl-C.
import { startCluster } from './start-cluster.js';

const cluster = await startCluster();
process.stdout.write(`
kube-local is up: Kubernetes API at ${cluster.server}
kubeconfig: ${cluster.kubeconfigPath}
audit log:  ${cluster.auditLogPath}

export KUBECONFIG=${cluster.kubeconfigPath}

Ctrl-C stops every component and removes ${cluster.dataDir}.
`);
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nstopping kube-local...\n');
    void cluster.stop().then(() => process.exit(0));
  });
}
setInterval(() => {}, 1 << 30);
