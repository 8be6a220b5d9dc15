// Annotations that are instructions to some other controller of the cluster, one that acts with
// its own (broad) credentials across namespaces or outside the cluster: publish DNS records in a
// shared zone, copy a Secret out of another namespace, provision a cloud load balancer, share an
// address with another namespace's Service, hand a pod a cloud or Vault identity. On any object
// of a rendering (and on its pod templates) they are refused whatever the settings say. The
// Ingress allow-list (policy-ingress-annotations.ts) governs the ingress controller's own.

/** Prefixes (`<prefix>name`) of annotations refused on every object, and what their controller would do. */
export const deniedAnnotationPrefixes: Readonly<Record<string, string>> = {
  'external-dns.alpha.kubernetes.io/': 'external-dns would publish DNS records for any name in a shared zone',
  'replicator.v1.mittwald.de/': 'kubernetes-replicator copies Secrets and ConfigMaps between namespaces',
  'reflector.v1.k8s.emberstack.com/': 'reflector copies Secrets and ConfigMaps between namespaces',
  'kubed.appscode.com/': 'kubed (config-syncer) copies Secrets and ConfigMaps between namespaces',
  'service.beta.kubernetes.io/': 'the cloud provider would configure a load balancer outside the cluster',
  'cloud.google.com/': 'GKE would create load balancers or network endpoint groups outside the cluster',
  'networking.gke.io/': 'GKE would configure load balancers outside the cluster',
  'metallb.universe.tf/': "MetalLB would assign or share addresses with other namespaces' Services",
  'metallb.io/': "MetalLB would assign or share addresses with other namespaces' Services",
  'eks.amazonaws.com/': 'EKS would hand the pods an AWS IAM role',
  'iam.amazonaws.com/': 'kube2iam or kiam would hand the pods an AWS IAM role',
  'iam.gke.io/': 'GKE would hand the pods a Google service account',
  'azure.workload.identity/': 'Azure workload identity would hand the pods a cloud identity',
  'vault.hashicorp.com/': 'the Vault agent injector would log the pods into Vault',
};

/** Why an annotation with this key may never be set by a rendering, or undefined. */
export function deniedAnnotation(key: string): string | undefined {
  const prefix = Object.keys(deniedAnnotationPrefixes).find((p) => key.toLowerCase().startsWith(p));
  return prefix && deniedAnnotationPrefixes[prefix];
}
