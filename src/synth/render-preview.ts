// A preview's configuration → its manifests, in the operator's process (pure and fast), and the
// split every rendering goes through before the policy: the namespace and its guards (quota,
// container defaults, network isolation, the tokenless `default` ServiceAccount) always come
// from this in-process rendering — the operator's, not the repository's — and everything else
// is the environment's own objects, which the policy then checks.
import { hash } from 'node:crypto';
import { App } from 'cdk8s';
import {
  PreviewEnvironmentChart,
  previewHostname,
  type DnsPeer,
  type IngressControllerPeer,
  type Manifest,
  type PodSecurityLevel,
  type PreviewConfig,
  type PreviewEnvironmentChartProps,
  type PreviewEnvironmentSpec,
  type PreviewIdentity,
  type PreviewTlsOptions,
} from '../../constructs/index.js';

/** The operator's rendering settings (the same for every environment). */
export interface PreviewRenderSettings {
  /** Hosts are `<prefix>-pr-<n>-<repository hash>.<domain>`. */
  domain: string;
  ingressClassName: string;
  /** `false`: no Certificate, plain HTTP (cert-manager is not installed). */
  tls: PreviewTlsOptions | false;
  podSecurity: PodSecurityLevel;
  ingressController?: IngressControllerPeer;
  dns?: DnsPeer;
}

/**
 * What tells a repository's preview hosts apart from every other's: 12 hex characters (48 bits,
 * beyond what grinding repository names could match) of sha256 of `owner/name`, lower-cased since
 * GitHub's names are case-insensitive.
 */
export function repositoryHash(repository: { owner: string; name: string }): string {
  return hash('sha256', `${repository.owner}/${repository.name}`.toLowerCase(), 'hex').slice(0, 12);
}

/** Who the environment is, from its name, spec, the configuration and the commit being rendered. */
export function previewIdentity(
  name: string,
  spec: PreviewEnvironmentSpec,
  config: PreviewConfig,
  sha: string,
  domain: string,
): PreviewIdentity {
  return {
    environment: name,
    repository: { owner: spec.repository.owner, name: spec.repository.name },
    pullRequest: spec.pullRequest.number,
    sha,
    namespace: name,
    host: previewHostname({
      hostPrefix: spec.overrides?.hostPrefix ?? config.hostPrefix,
      repositoryName: spec.repository.name,
      repositoryHash: repositoryHash(spec.repository),
      pullRequest: spec.pullRequest.number,
      domain,
    }),
  };
}

/** The spec's image and env overrides, copied; undefined when the spec has no overrides. */
function chartOverrides(spec: PreviewEnvironmentSpec): PreviewEnvironmentChartProps['overrides'] {
  if (!spec.overrides) return undefined;
  const { images, env } = spec.overrides;
  return { ...(images ? { images: { ...images } } : {}), ...(env ? { env: { ...env } } : {}) };
}

/** The props of the PreviewEnvironmentChart, plain data (they are also the sandbox's input). */
export function previewChartProps(
  identity: PreviewIdentity,
  spec: PreviewEnvironmentSpec,
  config: PreviewConfig,
  settings: PreviewRenderSettings,
): PreviewEnvironmentChartProps {
  const overrides = chartOverrides(spec);
  return {
    config,
    identity,
    ...(overrides ? { overrides } : {}),
    ingressClassName: settings.ingressClassName,
    tls: settings.tls,
    podSecurity: settings.podSecurity,
    ...(settings.ingressController ? { ingressController: settings.ingressController } : {}),
    ...(settings.dns ? { dns: settings.dns } : {}),
  };
}

export interface InProcessRendering {
  manifests: Manifest[];
  /** `Kind/name` of the namespace's guards (Namespace, ResourceQuota, LimitRange, NetworkPolicy, ServiceAccount default). */
  guards: Set<string>;
  /** Where the environment serves, when anything is routed. */
  url: string | undefined;
}

/** The chart, rendered here (deterministic: the same props give identical manifests). */
export function renderPreviewInProcess(props: PreviewEnvironmentChartProps): InProcessRendering {
  const chart = new PreviewEnvironmentChart(new App(), 'preview', props);
  const ns = chart.previewNamespace;
  const guards = new Set([ns.namespace, ...ns.guards].map((o) => `${o.kind}/${o.name}`));
  return { manifests: chart.toJson(), guards, url: chart.ingress ? chart.url : undefined };
}

export interface SplitRendering {
  /** The environment's Namespace object (applied first, owned by the PreviewEnvironment). */
  namespace: Manifest;
  /** ResourceQuota, LimitRange, NetworkPolicy, the default ServiceAccount of the operator's rendering. */
  guards: Manifest[];
  /** The environment's own objects (what the policy checks). */
  objects: Manifest[];
}

const key = (m: Manifest) => `${m.kind}/${m.metadata.name}`;

/**
 * Separates the operator's namespace and guards (taken from `operator`) from the environment's
 * objects (taken from `rendered`: the same in-process rendering, or the sandbox's output, whose
 * own versions of the namespace and guards are dropped — they cannot be changed from a repository).
 */
export function splitRendering(operator: InProcessRendering, rendered: readonly Manifest[], namespace: string): SplitRendering {
  const ns = operator.manifests.find((m) => m.kind === 'Namespace' && m.apiVersion === 'v1');
  if (!ns) throw new Error('the chart rendered no Namespace');
  const guards = operator.manifests.filter((m) => m !== ns && operator.guards.has(key(m)));
  const objects = rendered.filter((m) => {
    const isOwnNamespace = m.kind === 'Namespace' && m.apiVersion === 'v1' && m.metadata?.name === namespace;
    const isGuard = operator.guards.has(key(m)) && (m.metadata.namespace === undefined || m.metadata.namespace === namespace);
    return !isOwnNamespace && !isGuard;
  });
  return { namespace: ns, guards, objects };
}
