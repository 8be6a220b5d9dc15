// The policy every rendering passes before anything reaches the API server, whether it came
// from the construct library in the operator or from a repository's `.preview/main.ts` in the
// sandbox. Pure: the objects and the environment in, the objects as they will be applied and
// every violation out. A rendering with any violation is applied not at all.
import type { Manifest } from '../../constructs/index.js';
import { AllowedKinds, formatGroupKind, groupKindOf, isKnownClusterScoped } from './policy-allowed-kinds.js';
import { checkPodSecurity, podTemplateOf, type PodSecurityLevel } from './policy-pod-security.js';

export type PolicyRule =
  /** Not a Kubernetes object (no apiVersion, kind or name) or the same object twice. */
  | 'malformed'
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
  /** A pod that the namespace's Pod Security level would refuse. */
  | 'pod-security'
  /** An Ingress or Certificate for a host outside the environment's own. */
  | 'foreign-host'
  /** A Certificate signed by another issuer than the configured one. */
  | 'certificate-issuer'
  /** A Service with externalIPs (it could intercept cluster traffic, CVE-2020-8554). */
  | 'service-external-ips'
  /** A claim bound to a named existing volume (it could take another environment's data). */
  | 'volume-binding'
  /** Owner references are the operator's to set. */
  | 'owner-references';

export interface PolicyViolation {
  /** `Kind.group namespace/name` of the offending object. */
  object: string;
  rule: PolicyRule;
  message: string;
}

export interface RenderPolicy {
  /** The environment's namespace: every object is put there, and nothing may point elsewhere. */
  namespace: string;
  /** The environment's host: Ingresses and Certificates may name it and its subdomains only. */
  host: string;
  allowedKinds: AllowedKinds;
  /** The Pod Security level the namespace enforces. */
  podSecurity: PodSecurityLevel;
  /** The issuer Certificates must use (undefined: any). */
  certificateIssuer?: { name: string; kind: string };
}

export interface PolicyResult {
  /** The objects as they will be applied: in the namespace, without server-set fields or status. */
  objects: Manifest[];
  violations: PolicyViolation[];
}

type Json = Record<string, unknown>;

const serverFields = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'];

function asObject(value: unknown): Json | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
}

export function describeObject(object: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } }): string {
  const gk = formatGroupKind(groupKindOf({ apiVersion: object.apiVersion ?? '', kind: object.kind ?? '?' }));
  const where = object.metadata?.namespace ? `${object.metadata.namespace}/` : '';
  return `${gk} ${where}${object.metadata?.name ?? '?'}`;
}

/** Checks a rendering against the policy; see PolicyRule for what is refused and why. */
export function checkRenderedObjects(rendered: readonly Manifest[], policy: RenderPolicy): PolicyResult {
  const violations: PolicyViolation[] = [];
  const objects: Manifest[] = [];
  const seen = new Set<string>();

  for (const original of rendered) {
    const object = structuredClone(original) as Manifest;
    if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string' || typeof object.metadata?.name !== 'string') {
      violations.push({ object: describeObject(object), rule: 'malformed', message: 'every object needs apiVersion, kind and metadata.name' });
      continue;
    }
    const gk = groupKindOf(object);
    const declaredNamespace = object.metadata.namespace;
    const what = describeObject(object);
    const violate = (rule: PolicyRule, message: string) => violations.push({ object: what, rule, message });

    if (isKnownClusterScoped(gk)) {
      violate('cluster-scoped', `${formatGroupKind(gk)} is cluster-scoped; a preview may create only namespaced objects in its own namespace`);
      continue;
    }
    if (!policy.allowedKinds.has(gk)) {
      violate('kind-not-allowed', `${formatGroupKind(gk)} is not among the kinds previews may create`);
    }
    if (declaredNamespace !== undefined && declaredNamespace !== '' && declaredNamespace !== policy.namespace) {
      violate('other-namespace', `it targets namespace "${declaredNamespace}"; a preview's objects live in "${policy.namespace}" only`);
    }
    if (object.metadata.ownerReferences !== undefined) violate('owner-references', 'metadata.ownerReferences must not be set');

    for (const field of serverFields) delete object.metadata[field];
    delete object.status;
    object.metadata.namespace = policy.namespace;
    const identity = `${gk.group}/${gk.kind}/${object.metadata.name}`;
    if (seen.has(identity)) violate('malformed', 'the rendering contains this object twice');
    seen.add(identity);

    checkRbac(object, gk.group, policy, violate);
    checkPods(object, policy, violate);
    checkHosts(object, gk.group, policy, violate);
    if (gk.group === '' && gk.kind === 'Service') {
      const ips = asObject(object.spec)?.externalIPs;
      if (Array.isArray(ips) && ips.length > 0) violate('service-external-ips', 'spec.externalIPs must not be set');
    }
    if (gk.group === '' && gk.kind === 'PersistentVolumeClaim') {
      const spec = asObject(object.spec) ?? {};
      if (spec.volumeName !== undefined && spec.volumeName !== '') violate('volume-binding', `spec.volumeName binds an existing volume (${String(spec.volumeName)}); claims must be provisioned`);
      const source = asObject(spec.dataSourceRef);
      if (source?.namespace !== undefined && source.namespace !== policy.namespace) violate('other-namespace', `spec.dataSourceRef reads from namespace "${String(source.namespace)}"`);
    }
    objects.push(object);
  }
  return { objects, violations };
}

function checkRbac(object: Manifest, group: string, policy: RenderPolicy, violate: (rule: PolicyRule, message: string) => void): void {
  if (group !== 'rbac.authorization.k8s.io' || object.kind !== 'RoleBinding') return;
  const roleRef = asObject(object.roleRef) ?? {};
  if (roleRef.kind !== 'Role') violate('rbac-cluster-role', `roleRef names ${String(roleRef.kind)} "${String(roleRef.name)}"; bindings may name Roles of the namespace only`);
  const subjects = Array.isArray(object.subjects) ? object.subjects.map((s) => asObject(s) ?? {}) : [];
  subjects.forEach((subject, i) => {
    if (subject.kind !== 'ServiceAccount') {
      violate('rbac-subject', `subjects[${i}] is the ${String(subject.kind)} "${String(subject.name)}"; only ServiceAccounts of the namespace may be bound`);
    } else if (subject.namespace !== undefined && subject.namespace !== policy.namespace) {
      violate('rbac-subject', `subjects[${i}] is a ServiceAccount of namespace "${String(subject.namespace)}"`);
    }
  });
}

function checkPods(object: Manifest, policy: RenderPolicy, violate: (rule: PolicyRule, message: string) => void): void {
  const pod = podTemplateOf(object as Manifest & { metadata: { annotations?: Record<string, string> } });
  if (!pod) return;
  for (const v of checkPodSecurity(pod.spec, pod.annotations, policy.podSecurity)) {
    violate('pod-security', `${pod.path}.${v.path}: ${v.message} (Pod Security "${policy.podSecurity}", check ${v.check})`);
  }
}

function withinHost(name: unknown, host: string): boolean {
  return typeof name === 'string' && (name === host || name.endsWith(`.${host}`));
}

function checkHosts(object: Manifest, group: string, policy: RenderPolicy, violate: (rule: PolicyRule, message: string) => void): void {
  const spec = asObject(object.spec) ?? {};
  if (group === 'networking.k8s.io' && object.kind === 'Ingress') {
    const rules = Array.isArray(spec.rules) ? spec.rules.map((r) => asObject(r) ?? {}) : [];
    rules.forEach((rule, i) => {
      if (!withinHost(rule.host, policy.host)) violate('foreign-host', `spec.rules[${i}].host is ${rule.host === undefined ? 'empty (every host)' : `"${String(rule.host)}"`}; it must be ${policy.host} or a subdomain of it`);
    });
    const tls = Array.isArray(spec.tls) ? spec.tls.map((t) => asObject(t) ?? {}) : [];
    tls.forEach((entry, i) => {
      for (const host of Array.isArray(entry.hosts) ? entry.hosts : []) {
        if (!withinHost(host, policy.host)) violate('foreign-host', `spec.tls[${i}].hosts names "${String(host)}"; it must be ${policy.host} or a subdomain of it`);
      }
    });
    if (spec.defaultBackend !== undefined) violate('foreign-host', 'spec.defaultBackend would serve every host; route the environment\'s host instead');
  }
  if (group === 'cert-manager.io' && object.kind === 'Certificate') {
    const names = [...(Array.isArray(spec.dnsNames) ? spec.dnsNames : []), ...(spec.commonName === undefined ? [] : [spec.commonName])];
    for (const name of names) {
      if (!withinHost(name, policy.host)) violate('foreign-host', `it names "${String(name)}"; certificates may cover ${policy.host} and its subdomains only`);
    }
    const issuer = asObject(spec.issuerRef) ?? {};
    const wanted = policy.certificateIssuer;
    if (wanted && (issuer.name !== wanted.name || (issuer.kind ?? 'Issuer') !== wanted.kind)) {
      violate('certificate-issuer', `issuerRef is ${String(issuer.kind ?? 'Issuer')} "${String(issuer.name)}"; previews use ${wanted.kind} "${wanted.name}"`);
    }
  }
}

/** One line per violation, for a condition, an Event and the PR comment. */
export function formatPolicyViolations(violations: readonly PolicyViolation[]): string {
  return violations.map((v) => `${v.object}: ${v.message} [${v.rule}]`).join('\n');
}
