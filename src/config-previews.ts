// The settings of rendering previews: the git checkout (for `.preview/main.ts`), the sandbox that
// runs repository code, what a preview looks like (domain, ingress, TLS, Pod Security), and the
// rendering policy: what a rendering may contain beyond the strict defaults, and its limits.
import type { OperatorConfig } from './config.js';
import { isDnsName, names, type SettingReader } from './config-reader.js';
import { previewTlsModes } from '../constructs/preview-tls.js';
import { AllowedKinds } from './synth/guard-allowed-kinds.js';
import { ingressAnnotationSettingProblem } from './synth/guard-ingress-annotations.js';
import { optionalServiceTypes, type OptionalServiceType } from './synth/guard-network-exposure.js';
import type { RenderPolicySettings } from './synth/guard-rendered-objects.js';
import type { ControllerNeeds } from './config-process.js';

export function checkoutSettings(read: SettingReader): OperatorConfig['git'] {
  const cacheDir = read.str('checkout-cache-dir')!;
  if (!cacheDir.startsWith('/')) read.problem('checkout-cache-dir', `"${cacheDir}" must be an absolute path`);
  const concurrency = read.int('git-concurrency', 1, 64);
  const timeoutMs = read.duration('git-timeout', 1000);
  const protocols = read.list('git-allowed-protocols');
  if (protocols.length === 0 || protocols.some((p) => !['https', 'http', 'file'].includes(p))) {
    read.problem('git-allowed-protocols', `${read.raw('git-allowed-protocols')!.source}: each must be https, http or file`);
  }
  return { cacheDir, concurrency: concurrency!, timeoutMs: timeoutMs!, allowedProtocols: protocols.map((p) => `${p}:`) };
}

export function sandboxSettings(read: SettingReader): OperatorConfig['sandbox'] {
  const timeoutMs = read.duration('sandbox-timeout', 1000);
  const maxHeapMb = read.int('sandbox-max-heap-mb', 32, 16384);
  const maxRssMb = read.int('sandbox-max-rss-mb', 64, 32768);
  const concurrency = read.int('sandbox-concurrency', 1, 64);
  if (maxHeapMb !== undefined && maxRssMb !== undefined && maxRssMb <= maxHeapMb) {
    read.problem(
      'sandbox-max-rss-mb',
      `must be larger than --sandbox-max-heap-mb (${maxRssMb} ≤ ${maxHeapMb}): the heap lives inside the resident memory`,
    );
  }
  return {
    timeoutMs: timeoutMs!,
    maxHeapMb: maxHeapMb!,
    maxRssMb: maxRssMb!,
    concurrency: concurrency!,
    rendererSocket: read.str('sandbox-renderer-socket'),
  };
}

export function previewSettings(read: SettingReader, needs: ControllerNeeds): OperatorConfig['previews'] {
  const domain = read.str('preview-domain');
  if (domain !== undefined && !isDnsName(domain)) {
    read.problem('preview-domain', `"${domain}" is not a DNS name (lower-case labels of letters, digits and '-', separated by dots)`);
  }
  if (domain === undefined && needs.previewDomain) {
    read.problem(
      'preview-domain',
      'required by the preview-environment controller: preview hosts are <repo>-pr-<n>-<repository hash>.<domain>',
    );
  }
  const ingressClass = read.str('ingress-class')!;
  if (!names.dnsSubdomain.test(ingressClass)) read.problem('ingress-class', `"${ingressClass}" is not a valid IngressClass name`);
  const tls = tlsSettings(read);
  const tlsWildcardSecret = wildcardSecretSetting(read, tls);
  const environmentSelector = read.str('environment-selector');
  if (environmentSelector !== undefined && !/^[A-Za-z0-9._/=!,()\s-]+$/.test(environmentSelector)) {
    read.problem('environment-selector', `"${environmentSelector}" is not a label selector (e.g. preview.alien6.io/shard=a)`);
  }
  const podSecurity = read.oneOf('pod-security', ['restricted', 'baseline', 'privileged'] as const);
  const allowedKinds = read.list('allowed-kinds');
  try {
    new AllowedKinds(allowedKinds);
  } catch (err) {
    read.problem('allowed-kinds', (err as Error).message);
  }
  return {
    domain: domain ?? 'preview.localhost',
    ingressClass,
    tls,
    podSecurity: podSecurity!,
    ...(tlsWildcardSecret ? { tlsWildcardSecret } : {}),
    ...(environmentSelector ? { environmentSelector } : {}),
    allowedKinds,
    renderPolicy: renderPolicySettings(read),
  };
}

function tlsSettings(read: SettingReader): OperatorConfig['previews']['tls'] {
  const issuer = read.str('tls-issuer')!;
  const kind = read.oneOf('tls-issuer-kind', ['ClusterIssuer', 'Issuer'] as const);
  if (issuer !== 'none' && !names.dnsSubdomain.test(issuer)) {
    read.problem('tls-issuer', `"${issuer}" is not a valid issuer name (or "none")`);
  }
  const mode = read.oneOf('tls-mode', previewTlsModes) ?? 'per-preview';
  if (issuer === 'none' && mode !== 'per-preview') {
    read.problem('tls-mode', `--tls-mode=${mode} serves TLS, --tls-issuer=none plain HTTP: set an issuer, or leave the mode per-preview`);
  }
  return issuer === 'none' ? false : { issuer: { name: issuer, kind: kind! }, mode };
}

/** `<namespace>/<name>` of the wildcard certificate's Secret: wanted by the wildcard modes, and only by them. */
function wildcardSecretSetting(
  read: SettingReader,
  tls: OperatorConfig['previews']['tls'],
): { namespace: string; name: string } | undefined {
  const value = read.str('tls-wildcard-secret');
  const wildcard = tls !== false && tls.mode !== 'per-preview';
  if (value === undefined) {
    if (wildcard) read.problem('tls-wildcard-secret', `required by --tls-mode=${tls.mode}: the Secret of the certificate for *.<domain>`);
    return undefined;
  }
  const [namespace = '', name = '', ...rest] = value.split('/');
  if (rest.length > 0 || !names.dnsLabel.test(namespace) || !names.dnsSubdomain.test(name)) {
    read.problem('tls-wildcard-secret', `"${value}" is not <namespace>/<name> of a Secret`);
    return undefined;
  }
  if (!wildcard) read.problem('tls-wildcard-secret', 'is used only with --tls-mode=wildcard or ingress-default');
  return { namespace, name };
}

/** A list setting of Kubernetes names; each that is not one (`what`) is a problem of the setting. */
function nameList(read: SettingReader, setting: string, pattern: RegExp, what: string): string[] {
  const list = read.list(setting);
  for (const name of list.filter((n) => !pattern.test(n))) read.problem(setting, `"${name}" is not ${what}`);
  return list;
}

function renderPolicySettings(read: SettingReader): RenderPolicySettings {
  const serviceTypes = read.list('allowed-service-types');
  const badTypes = serviceTypes.filter((t) => !(optionalServiceTypes as readonly string[]).includes(t));
  if (badTypes.length > 0) {
    const reason = 'each must be LoadBalancer or NodePort (ClusterIP is always allowed, ExternalName never)';
    read.problem('allowed-service-types', `${badTypes.join(', ')}: ${reason}`);
  }
  const ingressAnnotations = read.list('allowed-ingress-annotations');
  for (const reason of ingressAnnotations.map(ingressAnnotationSettingProblem)) {
    if (reason) read.problem('allowed-ingress-annotations', reason);
  }
  const allowTokenAutomount = read.bool('allow-token-automount');
  const priorityClasses = nameList(read, 'allowed-priority-classes', names.dnsSubdomain, 'a PriorityClass name');
  const tolerationKeys = nameList(read, 'allowed-toleration-keys', names.qualifiedName, 'a taint key (prefix/name or name)');
  const runtimeClasses = nameList(read, 'allowed-runtime-classes', names.dnsSubdomain, 'a RuntimeClass name');
  const csiDrivers = nameList(read, 'allowed-csi-drivers', names.dnsSubdomain, 'a CSI driver name');
  const storageClasses = nameList(read, 'allowed-storage-classes', names.dnsSubdomain, 'a StorageClass name');
  // Depth at most 1000: past the check, objects are cloned and serialised recursively.
  const limits = {
    maxObjects: read.int('max-rendered-objects', 1)!,
    maxBytes: read.int('max-rendered-bytes', 1024)!,
    maxObjectBytes: read.int('max-rendered-object-bytes', 1024)!,
    maxDepth: read.int('max-rendered-depth', 16, 1000)!,
  };
  return {
    allowedServiceTypes: serviceTypes as OptionalServiceType[],
    ingressAnnotations,
    allowTokenAutomount: allowTokenAutomount!,
    priorityClasses,
    tolerationKeys,
    runtimeClasses,
    csiDrivers,
    storageClasses,
    limits,
  };
}
