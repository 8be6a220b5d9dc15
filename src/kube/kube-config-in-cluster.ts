// Credentials of a pod: the API server's Service from the environment, the ServiceAccount's
// CA and token from the projected volume, as client-go's InClusterConfig reads them. The
// token is a bound token the kubelet rotates, so it is named as a file and re-read.
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { ResolvedContext } from './kube-config-context.js';

const defaultServiceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The in-cluster context, or undefined when this process does not run in a pod with a ServiceAccount token. */
export function inClusterContext(
  env: Readonly<Record<string, string | undefined>>,
  serviceAccountDir = defaultServiceAccountDir,
): ResolvedContext | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const tokenFile = path.join(serviceAccountDir, 'token');
  if (!host || !port || !existsSync(tokenFile)) return undefined;
  const caFile = path.join(serviceAccountDir, 'ca.crt');
  const namespaceFile = path.join(serviceAccountDir, 'namespace');
  return {
    name: 'in-cluster',
    namespace: existsSync(namespaceFile) ? readFileSync(namespaceFile, 'utf8').trim() || undefined : undefined,
    cluster: {
      name: 'in-cluster',
      server: `https://${net.isIPv6(host) ? `[${host}]` : host}:${port}`,
      // Without the CA file, the system's roots (as client-go does after logging it).
      caFile: existsSync(caFile) ? caFile : undefined,
      insecureSkipTlsVerify: false,
    },
    user: { name: 'in-cluster', tokenFile },
  };
}
