// The policy every rendering passes before anything reaches the API server, whether it came
// from the construct library in the operator or from a repository's `.preview/main.ts` in the
// sandbox. Pure: the objects and the environment in, the objects as they will be applied and
// every violation out. Deny by default: a kind outside the allow-list, and any field of an
// allowed kind that reaches past the environment (see PolicyRule), is refused. A rendering with
// any violation is applied not at all.
import type { Manifest } from '../../constructs/index.js';
import { AllowedKinds, formatGroupKind, groupKindOf, isKnownClusterScoped } from './guard-allowed-kinds.js';
import { checkCertificate } from './guard-certificates.js';
import { deniedAnnotation } from './guard-controller-annotations.js';
import { checkAlgorithmPodLabels, checkDisruptionBudget } from './guard-disruption-budgets.js';
import { checkAlgorithmGpu, checkPodExtendedResources } from './guard-extended-resources.js';
import { asObject } from './guard-json.js';
import { checkIngress, checkService, type OptionalServiceType } from './guard-network-exposure.js';
import { checkPodFields } from './guard-object-fields.js';
import { checkPodReach } from './guard-pod-reach.js';
import { checkPodSecurity, podTemplateOf, type PodSecurityLevel } from './guard-pod-security.js';
import { checkRole, checkRoleBinding } from './guard-rbac.js';
import { checkScheduling } from './guard-scheduling.js';
import { checkPodTokens, checkSecret, checkServiceAccount } from './guard-service-account-tokens.js';
import { checkVolumeClaims } from './guard-volume-claims.js';
import { checkReservedCertificateSecret, checkReservedSecret, checkReservedSecretMounts } from './guard-wildcard-secret.js';
import { defaultOutputLimits, findOutputShapeProblem, type OutputLimit, type OutputLimits } from './rendered-output-limits.js';

export type PolicyRule =
  /** More objects than the limit: each would be an API request, and a rendering is not a bulk loader. */
  | 'too-many-objects'
  /** More bytes of JSON than the limit, in all or in one object. */
  | 'too-large'
  /** Nested deeper than the limit (checked before anything clones or walks the rendering recursively). */
  | 'too-deep'
  /** Not a Kubernetes object (no apiVersion, kind or name) or the same object twice. */
  | 'malformed'
  /** A field the API server would refuse, in an object it can judge only at its real write (a RoleBinding, a bare Pod). */
  | 'invalid-field'
  /** A cluster-scoped kind: it would outlive the environment or reach beyond it. */
  | 'cluster-scoped'
  /** A kind outside the configured allow-list. */
  | 'kind-not-allowed'
  /** An object, or something it points to, in another namespace. */
  | 'other-namespace'
  /** A RoleBinding to a ClusterRole: it would grant whatever that role grants cluster-wide roles hold. */
  | 'rbac-cluster-role'
  /** A RoleBinding subject other than a ServiceAccount of the environment's namespace. */
  | 'rbac-subject'
  /** A Role with `*` in its groups, resources or verbs (or nonResourceURLs). */
  | 'rbac-wildcard'
  /** A Role granting escalate, bind or impersonate. */
  | 'rbac-privileged-verb'
  /** A Role granting anything on the namespace itself, its guards (NetworkPolicy, ResourceQuota, LimitRange), RBAC or token requests. */
  | 'rbac-guard-resource'
  /** A Role granting writes on anything but Events and Leases: every other kind is one this policy checks. */
  | 'rbac-checked-write'
  /** A pod that the namespace's Pod Security level would refuse. */
  | 'pod-security'
  /** An Ingress or Certificate for a host outside the environment's own. */
  | 'foreign-host'
  /** An Ingress for another IngressClass than the operator's (spec.ingressClassName or the legacy annotation). */
  | 'ingress-class'
  /** An Ingress annotation outside the allow-list, never allowed (snippets, auth-url, ...) or with an unsafe value. */
  | 'ingress-annotation'
  /** A Certificate signed by another issuer than the configured one. */
  | 'certificate-issuer'
  /** A Certificate that would be a certificate authority (isCA, cert sign or crl sign usages). */
  | 'certificate-ca'
  /** A Certificate naming URIs, IP or email addresses, other names or a literal subject. */
  | 'certificate-san'
  /** A Certificate with key usages beyond serving TLS (client auth, code signing, ...). */
  | 'certificate-usage'
  /** A Service of a type other than ClusterIP (and those the operator allows). */
  | 'service-type'
  /** A Service of type ExternalName: a DNS alias of any name (e.g. kubernetes.default). */
  | 'service-external-name'
  /** A Service with externalIPs (it could intercept cluster traffic, CVE-2020-8554). */
  | 'service-external-ips'
  /** A Secret of type kubernetes.io/service-account-token (or annotated for one). */
  | 'service-account-token'
  /** The operator's copy of the wildcard certificate: written by a Secret or a Certificate, or read by a pod. */
  | 'reserved-secret'
  /** A ServiceAccount or pod that would mount an API token (unless the operator allows it). */
  | 'service-account-automount'
  /** A claim of an existing volume: by name, by selector or with the empty StorageClass (it could take another environment's data). */
  | 'volume-binding'
  /** A pod placed past the scheduler (nodeName), with a priority class, runtime class or tolerations the operator does not allow. */
  | 'scheduling'
  /** An annotation that makes another controller act across namespaces or outside the cluster (external-dns, replicators, cloud). */
  | 'controller-annotation'
  /** Owner references are the operator's to set. */
  | 'owner-references'
  /** Finalizers: the repository runs no controller to remove them, and one left keeps the namespace Terminating (its slot held). */
  | 'finalizers'
  /** A PodDisruptionBudget that could allow no eviction: it would hold up every drain of its pods' nodes. */
  | 'disruption-budget'
  /** An inline CSI volume of a driver the operator does not allow: the driver acts on its attributes with its own identity. */
  | 'inline-volume'
  /** A termination grace period past the limit: a pod ignoring SIGTERM would outlive its namespace's deletion. */
  | 'termination-grace'
  /** An extended resource (a GPU) the namespace's quota does not bound, where it bounds others: past the ceiling. */
  | 'unbounded-resource';

export type Violate = (rule: PolicyRule, message: string) => void;

export interface PolicyViolation {
  /** `Kind.group namespace/name` of the offending object (`the rendering` for its size and shape). */
  object: string;
  rule: PolicyRule;
  message: string;
}

/** What an operator may loosen (or tighten); the defaults are the strict ones. */
export interface RenderPolicySettings {
  /** Service types allowed besides ClusterIP (default none; ExternalName never). */
  allowedServiceTypes: readonly OptionalServiceType[];
  /** Ingress annotations allowed besides `defaultIngressAnnotations` (snippets and the like never). */
  ingressAnnotations: readonly string[];
  /** ServiceAccounts and pods may mount API tokens (default false). */
  allowTokenAutomount: boolean;
  /** PriorityClasses pods may name (default none: the cluster's default priority). */
  priorityClasses: readonly string[];
  /** Taint keys pods may tolerate (default none, but the node conditions every pod tolerates). */
  tolerationKeys: readonly string[];
  /** RuntimeClasses pods may name (default none: the cluster's default runtime). */
  runtimeClasses: readonly string[];
  /** CSI drivers pods may use in inline volumes (default none). */
  csiDrivers: readonly string[];
  /** StorageClasses volume claims may name (default none: the cluster's default class). */
  storageClasses: readonly string[];
  /** Objects, bytes and depth of a rendering. */
  limits: OutputLimits;
}

export const defaultRenderPolicySettings: Readonly<RenderPolicySettings> = Object.freeze({
  allowedServiceTypes: [],
  ingressAnnotations: [],
  allowTokenAutomount: false,
  priorityClasses: [],
  tolerationKeys: [],
  runtimeClasses: [],
  csiDrivers: [],
  storageClasses: [],
  limits: defaultOutputLimits,
});

export interface RenderPolicy extends Partial<RenderPolicySettings> {
  /** The environment's namespace: every object is put there, and nothing may point elsewhere. */
  namespace: string;
  /** The environment's host: Ingresses and Certificates may name it and its subdomains only. */
  host: string;
  allowedKinds: AllowedKinds;
  /** The Pod Security level the namespace enforces. */
  podSecurity: PodSecurityLevel;
  /** The issuer Certificates must use (undefined: any). */
  certificateIssuer?: { name: string; kind: string };
  /** The IngressClass of every Ingress (set where an Ingress names none). */
  ingressClassName: string;
  /** The extended resources the namespace's ResourceQuota bounds: where it bounds any, pods and Algorithms ask for no other. */
  quotaExtendedResources?: readonly string[];
}

export interface PolicyResult {
  /** The objects as they will be applied: in the namespace, without server-set fields or status. */
  objects: Manifest[];
  violations: PolicyViolation[];
}

const serverFields = [
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
];

const shapeRules: Record<OutputLimit, PolicyRule> = {
  depth: 'too-deep',
  objects: 'too-many-objects',
  bytes: 'too-large',
  'object-bytes': 'too-large',
};

type ObjectCheck = (object: Manifest, policy: RenderPolicy, violate: Violate) => void;

/** The checks of particular kinds, by `group/Kind`. */
const kindChecks: Record<string, ObjectCheck> = {
  '/Service': checkService,
  '/Secret': (object, _policy, violate) => {
    checkSecret(object, violate);
    checkReservedSecret(object, violate);
  },
  '/ServiceAccount': checkServiceAccount,
  '/Pod': (object, _policy, violate) => checkPodFields(object, violate),
  'networking.k8s.io/Ingress': checkIngress,
  'cert-manager.io/Certificate': (object, policy, violate) => {
    checkCertificate(object, policy, violate);
    checkReservedCertificateSecret(object, violate);
    checkSecretTemplate(object, violate);
  },
  'rbac.authorization.k8s.io/Role': (object, _policy, violate) => checkRole(object, violate),
  'rbac.authorization.k8s.io/RoleBinding': checkRoleBinding,
  'policy/PodDisruptionBudget': (object, _policy, violate) => checkDisruptionBudget(object, violate),
  'ai.alien6.io/Algorithm': checkAlgorithmGpu,
};

export function describeObject(object: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } }): string {
  const gk = formatGroupKind(groupKindOf({ apiVersion: object.apiVersion ?? '', kind: object.kind ?? '?' }));
  const where = object.metadata?.namespace ? `${object.metadata.namespace}/` : '';
  return `${gk} ${where}${object.metadata?.name ?? '?'}`;
}

/** Checks a rendering against the policy; see PolicyRule for what is refused and why. */
export function checkRenderedObjects(rendered: readonly Manifest[], policy: RenderPolicy): PolicyResult {
  // First, and on its own: nothing below may clone or walk a rendering of unbounded size or depth.
  const shape = findOutputShapeProblem(rendered, policy.limits ?? defaultOutputLimits);
  if (shape) return { objects: [], violations: [{ object: 'the rendering', rule: shapeRules[shape.limit], message: shape.message }] };

  const violations: PolicyViolation[] = [];
  const objects: Manifest[] = [];
  const seen = new Set<string>();

  for (const original of rendered) {
    const object = structuredClone(original) as Manifest;
    if (typeof object?.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata?.name !== 'string') {
      violations.push({
        object: describeObject(asObject(object) ?? {}),
        rule: 'malformed',
        message: 'every object needs apiVersion, kind and metadata.name',
      });
      continue;
    }
    const gk = groupKindOf(object);
    const declaredNamespace = object.metadata.namespace;
    const what = describeObject(object);
    const violate: Violate = (rule, message) => violations.push({ object: what, rule, message });

    if (isKnownClusterScoped(gk)) {
      violate(
        'cluster-scoped',
        `${formatGroupKind(gk)} is cluster-scoped; a preview may create only namespaced objects in its own namespace`,
      );
      continue;
    }
    if (!policy.allowedKinds.has(gk)) {
      violate('kind-not-allowed', `${formatGroupKind(gk)} is not among the kinds previews may create`);
    }
    if (declaredNamespace !== undefined && declaredNamespace !== '' && declaredNamespace !== policy.namespace) {
      violate('other-namespace', `it targets namespace "${declaredNamespace}"; a preview's objects live in "${policy.namespace}" only`);
    }
    if (object.metadata.ownerReferences !== undefined) violate('owner-references', 'metadata.ownerReferences must not be set');
    for (const path of finalizerPaths(object)) {
      violate('finalizers', `${path} must not be set: nothing would remove them, and the namespace would never be deleted`);
    }

    for (const field of serverFields) delete object.metadata[field];
    delete object.status;
    object.metadata.namespace = policy.namespace;
    const identity = `${gk.group}/${gk.kind}/${object.metadata.name}`;
    if (seen.has(identity)) violate('malformed', 'the rendering contains this object twice');
    seen.add(identity);

    kindChecks[`${gk.group}/${gk.kind}`]?.(object, policy, violate);
    // An Ingress's annotations are its own check's (an allow-list that includes these refusals).
    const isIngress = gk.group === 'networking.k8s.io' && gk.kind === 'Ingress';
    if (!isIngress) checkAnnotations(object.metadata.annotations, 'metadata.annotations', violate);
    checkVolumeClaims(object, policy, violate);
    checkPods(object, policy, violate);
    objects.push(object);
  }
  return { objects, violations };
}

function checkAnnotations(annotations: unknown, path: string, violate: Violate): void {
  for (const key of Object.keys(asObject(annotations) ?? {})) {
    const denied = deniedAnnotation(key);
    if (denied) violate('controller-annotation', `${path}[${key}] is refused: ${denied}`);
  }
}

/**
 * Where the object sets finalizers: its own metadata, and the metadata of every template in it (a
 * pod template's reach the pods a controller makes from it, a claim template's the claims).
 */
function finalizerPaths(value: unknown, path = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const entries = Array.isArray(value)
    ? value.map((v, i) => [`[${i}]`, v] as const)
    : Object.entries(value).map(([k, v]) => [`.${k}`, v] as const);
  return entries.flatMap(([key, child]) => {
    const here = `${path}${key}`;
    const own = key === '.metadata' && asObject(child)?.finalizers !== undefined ? [`${here.slice(1)}.finalizers`] : [];
    return [...own, ...finalizerPaths(child, here)];
  });
}

/** cert-manager copies a Certificate's secretTemplate onto the Secret it writes, where a replicator would act on it. */
function checkSecretTemplate(object: Manifest, violate: Violate): void {
  const template = asObject(asObject(object.spec)?.secretTemplate);
  checkAnnotations(template?.annotations, 'spec.secretTemplate.annotations', violate);
}

function checkPods(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  const pod = podTemplateOf(object as Manifest & { metadata: { annotations?: Record<string, string> } });
  if (!pod) return;
  for (const v of checkPodSecurity(pod.spec, pod.annotations, policy.podSecurity)) {
    violate('pod-security', `${pod.path}.${v.path}: ${v.message} (Pod Security "${policy.podSecurity}", check ${v.check})`);
  }
  checkPodTokens(pod, policy, violate);
  checkReservedSecretMounts(pod, violate);
  checkScheduling(pod, policy, violate);
  checkPodReach(pod, policy, violate);
  checkAlgorithmPodLabels(pod, violate);
  checkPodExtendedResources(pod, policy, violate);
  if (pod.path !== 'spec') checkAnnotations(pod.annotations, pod.path.replace(/spec$/, 'metadata.annotations'), violate);
}

/** One line per violation, for a condition, an Event and the PR comment. */
export function formatPolicyViolations(violations: readonly PolicyViolation[]): string {
  return violations.map((v) => `${v.object}: ${v.message} [${v.rule}]`).join('\n');
}
