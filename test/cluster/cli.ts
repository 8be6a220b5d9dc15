// `npm run cluster`: a local control plane, with cert-manager, for poking at by hand, up until Ctrl-C.
import { testCaIssuer } from './cert-manager.js';
import { startCluster } from './start-cluster.js';

const cluster = await startCluster({ certManager: true });
process.stdout.write(`
kube-local is up: Kubernetes API at ${cluster.server}
kubeconfig: ${cluster.kubeconfigPath}
audit log:  ${cluster.auditLogPath}
cert-manager: running; ClusterIssuer ${testCaIssuer} issues from a test CA

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
