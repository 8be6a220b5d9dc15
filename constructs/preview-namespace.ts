import { JsonPatch, type ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import { Construct } from 'constructs';

export type PodSecurityLevel = 'restricted' | 'baseline' | 'privileged';

/** Totals for the namespace, enforced by its ResourceQuota. */
export interface PreviewQuota {
  /** Sum of CPU limits of all containers. @default '8' */
  readonly cpu?: string;
  /** Sum of memory limits of all containers. @default '16Gi' */
  readonly memory?: string;
  /** Sum of volume claim sizes. @default '100Gi' */
  readonly storage?: string;
  /** Number of volume claims. @default 10 */
  readonly persistentVolumeClaims?: number;
  /** Number of pods. @default 50 */
  readonly pods?: number;
  /**
   * GPUs per GPU resource name, e.g. `{ 'nvidia.com/gpu': 6 }`.
   * @default - no GPU limit
   */
  readonly gpus?: Readonly<Record<string, number>>;
}

/** The quota of a namespace whose PreviewQuota leaves a total unset. */
export const defaultPreviewQuota = { cpu: '8', memory: '16Gi', storage: '100Gi', persistentVolumeClaims: 10, pods: 50 } as const;

/** Defaults the LimitRange gives containers that declare no resources. */
export interface PreviewContainerDefaults {
  /** @default { cpu: '100m', memory: '128Mi' } */
  readonly requests?: Readonly<Record<string, string>>;
  /** @default { cpu: '500m', memory: '512Mi' } */
  readonly limits?: Readonly<Record<string, string>>;
}

/** Which pods may reach the environment from outside its namespace. */
export interface IngressControllerPeer {
  /**
   * Labels of the ingress controller's namespace.
   * @default { 'kubernetes.io/metadata.name': 'ingress-nginx' }
   */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  /**
   * Labels of the ingress controller's pods in that namespace.
   * @default - every pod of that namespace
   */
  readonly podLabels?: Readonly<Record<string, string>>;
}

/** Where cluster DNS runs. */
export interface DnsPeer {
  /** @default { 'kubernetes.io/metadata.name': 'kube-system' } */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  /** @default { 'k8s-app': 'kube-dns' } */
  readonly podLabels?: Readonly<Record<string, string>>;
}

export interface PreviewNamespaceProps {
  /** Name of the namespace. */
  readonly name: string;
  /**
   * Pod Security Standard enforced (and warned about and audited) in the namespace.
   * @default 'restricted'
   */
  readonly podSecurity?: PodSecurityLevel;
  /** @default see PreviewQuota */
  readonly quota?: PreviewQuota;
  /** @default see PreviewContainerDefaults */
  readonly containerDefaults?: PreviewContainerDefaults;
  /** @default the ingress-nginx namespace */
  readonly ingressController?: IngressControllerPeer;
  /** @default kube-dns in kube-system */
  readonly dns?: DnsPeer;
  /** Extra labels on the Namespace object. @default - none */
  readonly labels?: Readonly<Record<string, string>>;
  /** Extra annotations on the Namespace object. @default - none */
  readonly annotations?: Readonly<Record<string, string>>;
}

function quantities(values: Readonly<Record<string, string>>): Record<string, k8s.Quantity> {
  const out: Record<string, k8s.Quantity> = {};
  for (const [key, value] of Object.entries(values)) out[key] = k8s.Quantity.fromString(value);
  return out;
}

/** The level enforced, warned about and audited, each at the latest version of the standard. */
function podSecurityLabels(level: PodSecurityLevel): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const mode of ['enforce', 'warn', 'audit']) {
    labels[`pod-security.kubernetes.io/${mode}`] = level;
    labels[`pod-security.kubernetes.io/${mode}-version`] = 'latest';
  }
  return labels;
}

function quotaHard(quota: PreviewQuota): Record<string, string> {
  const hard: Record<string, string> = {
    'limits.cpu': quota.cpu ?? defaultPreviewQuota.cpu,
    'limits.memory': quota.memory ?? defaultPreviewQuota.memory,
    'requests.storage': quota.storage ?? defaultPreviewQuota.storage,
    persistentvolumeclaims: String(quota.persistentVolumeClaims ?? defaultPreviewQuota.persistentVolumeClaims),
    pods: String(quota.pods ?? defaultPreviewQuota.pods),
    // A preview is reached through its ingress, never directly.
    'services.loadbalancers': '0',
    'services.nodeports': '0',
  };
  for (const [resource, count] of Object.entries(quota.gpus ?? {})) hard[`requests.${resource}`] = String(count);
  return hard;
}

// With limits.* in the quota every container must declare limits; these fill the gaps.
function limitRangeSpec(defaults: PreviewContainerDefaults | undefined): k8s.LimitRangeSpec {
  return {
    limits: [
      {
        type: 'Container',
        defaultRequest: quantities(defaults?.requests ?? { cpu: '100m', memory: '128Mi' }),
        default: quantities(defaults?.limits ?? { cpu: '500m', memory: '512Mi' }),
      },
    ],
  };
}

function ingressControllerPeer(peer: IngressControllerPeer | undefined): k8s.NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { ...(peer?.namespaceLabels ?? { 'kubernetes.io/metadata.name': 'ingress-nginx' }) } },
    podSelector: peer?.podLabels ? { matchLabels: { ...peer.podLabels } } : undefined,
  };
}

function dnsPeer(peer: DnsPeer | undefined): k8s.NetworkPolicyPeer {
  return {
    namespaceSelector: { matchLabels: { ...(peer?.namespaceLabels ?? { 'kubernetes.io/metadata.name': 'kube-system' }) } },
    podSelector: { matchLabels: { ...(peer?.podLabels ?? { 'k8s-app': 'kube-dns' }) } },
  };
}

function isolationSpec(props: PreviewNamespaceProps): k8s.NetworkPolicySpec {
  return {
    // Every pod, both directions: whatever no rule below admits is denied.
    podSelector: {},
    policyTypes: ['Ingress', 'Egress'],
    ingress: [{ from: [{ podSelector: {} }] }, { from: [ingressControllerPeer(props.ingressController)] }],
    egress: [
      { to: [{ podSelector: {} }] },
      {
        to: [dnsPeer(props.dns)],
        ports: [
          { protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) },
          { protocol: 'TCP', port: k8s.IntOrString.fromNumber(53) },
        ],
      },
    ],
  };
}

/**
 * The namespace of a preview: Pod Security labels, a ResourceQuota `preview-quota`, a
 * LimitRange `preview-defaults`, a NetworkPolicy `preview-isolation` that denies all
 * traffic except within the namespace, from the ingress controller and to cluster DNS, and
 * the `default` ServiceAccount without token automount (pods that name no ServiceAccount and do
 * not mention `automountServiceAccountToken` run as it, and would otherwise get its API token).
 */
export class PreviewNamespace extends Construct {
  public readonly name: string;
  public readonly namespace: k8s.KubeNamespace;
  public readonly resourceQuota: k8s.KubeResourceQuota;
  public readonly limitRange: k8s.KubeLimitRange;
  public readonly networkPolicy: k8s.KubeNetworkPolicy;
  public readonly defaultServiceAccount: k8s.KubeServiceAccount;

  constructor(scope: Construct, id: string, props: PreviewNamespaceProps) {
    super(scope, id);
    this.name = props.name;
    this.namespace = new k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name: props.name,
        labels: { ...props.labels, ...podSecurityLabels(props.podSecurity ?? 'restricted') },
        annotations: { ...props.annotations },
      },
    });
    // A chart's default namespace lands on every object, this cluster-scoped one included.
    this.namespace.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
    this.resourceQuota = new k8s.KubeResourceQuota(this, 'Quota', {
      metadata: { name: 'preview-quota', namespace: props.name },
      spec: { hard: quantities(quotaHard(props.quota ?? {})) },
    });
    this.limitRange = new k8s.KubeLimitRange(this, 'Defaults', {
      metadata: { name: 'preview-defaults', namespace: props.name },
      spec: limitRangeSpec(props.containerDefaults),
    });
    this.networkPolicy = new k8s.KubeNetworkPolicy(this, 'Isolation', {
      metadata: { name: 'preview-isolation', namespace: props.name },
      spec: isolationSpec(props),
    });
    // Created by the cluster in every namespace; applied over, so that it mounts no token.
    this.defaultServiceAccount = new k8s.KubeServiceAccount(this, 'DefaultServiceAccount', {
      metadata: { name: 'default', namespace: props.name },
      automountServiceAccountToken: false,
    });
  }

  /** The namespace's guards, which only the operator renders: everything but the Namespace object itself. */
  public get guards(): ApiObject[] {
    return [this.resourceQuota, this.limitRange, this.networkPolicy, this.defaultServiceAccount];
  }
}
