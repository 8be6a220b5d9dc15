// cert-manager in the local control plane: its real CRDs, its own controllers (cert-manager-local,
// a child process of the cluster) and a test CA that issues every preview's certificate:
// a self-signed ClusterIssuer signs the CA Certificate, whose Secret backs the CA ClusterIssuer
// `preview-issuer` (the operator's default --tls-issuer). cert-manager's webhook does not run.
import type { KubeConfig } from '@kubernetes/client-node';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { certManagerCrdFiles } from './cert-manager-binary.js';

/** Where ClusterIssuers' Secrets live (cert-manager-local's --cluster-resource-namespace). */
export const certManagerNamespace = 'cert-manager';
/** The CA ClusterIssuer of the local cluster: the operator's default issuer. */
export const testCaIssuer = 'preview-issuer';
/** The Secret holding the test CA's certificate (tls.crt, ca.crt) and key. */
export const testCaSecret = { namespace: certManagerNamespace, name: 'kube-local-ca' };
const selfSignedIssuer = 'kube-local-selfsigned';
const fieldManager = 'kube-local';

/** cert-manager-local's arguments, given the kubeconfig of its identity. */
export function certManagerArgs(kubeconfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    `--cluster-resource-namespace=${certManagerNamespace}`,
    '--kube-api-qps=100',
    '--kube-api-burst=200',
    '--v=2',
  ];
}

/** cert-manager's CRDs (Certificate, CertificateRequest, Issuer, ClusterIssuer), served once this resolves. */
export async function installCertManagerCrds(kc: KubeConfig): Promise<void> {
  await installCrds(kc, await certManagerCrdFiles(), { fieldManager });
}

function caObjects(): ManifestLike[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: certManagerNamespace } },
    { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: selfSignedIssuer }, spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: testCaSecret.name, namespace: certManagerNamespace },
      spec: {
        isCA: true,
        commonName: 'kube-local test CA',
        secretName: testCaSecret.name,
        duration: '8760h',
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { group: 'cert-manager.io', kind: 'ClusterIssuer', name: selfSignedIssuer },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'ClusterIssuer',
      metadata: { name: testCaIssuer },
      spec: { ca: { secretName: testCaSecret.name } },
    },
  ];
}

interface Conditioned {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/**
 * Creates the test CA and resolves once cert-manager reports the CA ClusterIssuer Ready (which
 * takes the running controllers: the self-signed issuer signs the CA, the CA issuer validates
 * its Secret). `failIfExited` throws when the controller process died.
 */
export async function createTestCa(kc: KubeConfig, failIfExited: () => void, timeoutMs = 120_000): Promise<void> {
  for (const object of caObjects()) await serverSideApply(kc, object, { fieldManager });
  const deadline = Date.now() + timeoutMs;
  let last = 'not reported';
  for (;;) {
    failIfExited();
    const path = `/apis/cert-manager.io/v1/clusterissuers/${testCaIssuer}`;
    const issuer = (await kubeRequest(kc, 'GET', path).catch(() => undefined)) as Conditioned | undefined;
    const ready = issuer?.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True') return;
    if (ready) last = `${ready.reason}: ${ready.message}`;
    if (Date.now() > deadline) {
      throw new Error(`cert-manager-local: ClusterIssuer ${testCaIssuer} not Ready after ${timeoutMs / 1000}s (${last})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
