// RBAC a rendering may contain: Roles and RoleBindings in its namespace, for its own
// ServiceAccounts, granting ordinary namespaced resources. A Role is checked for what it grants,
// not just where: one that reaches the namespace's guards or RBAC lets a pod lift its own
// isolation, budget or permissions; one that writes what this policy checks lets a pod create at
// run time what a rendering may not. This policy checks every kind (the kind itself, annotations,
// finalizers, pods and their templates), so a Role may read anything but the guards and write
// only the few kinds no controller acts on.
// `namespaces` is a guard too: a request for the Namespace object itself is authorised by the
// RoleBindings inside it, so a Role there could lift its Pod Security label or its ownership.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects, asStrings } from './guard-json.js';
import type { RenderPolicy, Violate } from './guard-rendered-objects.js';
import { checkRoleBindingFields } from './guard-object-fields.js';

/** Refused for every verb: the namespace itself and its guards, RBAC itself, and minting tokens. */
const guardResources = new Set([
  'namespaces',
  'networkpolicies',
  'resourcequotas',
  'limitranges',
  'roles',
  'rolebindings',
  'clusterroles',
  'clusterrolebindings',
  'serviceaccounts/token',
]);
/** The verbs that change nothing; any other is a write. */
const readVerbs = new Set(['get', 'list', 'watch']);
/**
 * What a Role may write, as `group/resource`: leader election and events, which no controller acts
 * on. Anything else written by a pod at run time (a pod with nodeName, a Deployment, an HTTPRoute,
 * a ConfigMap annotated for a replicator) would skip the checks its rendering passes. (A finalizer
 * on such a Lease or Event stalls only this environment's own teardown.)
 */
const writableResources = new Set(['coordination.k8s.io/leases', '/events', 'events.k8s.io/events']);
const privilegedVerbs = new Set(['escalate', 'bind', 'impersonate']);

export function checkRole(object: Manifest, violate: Violate): void {
  asObjects(object.rules).forEach((rule, i) => {
    const apiGroups = asStrings(rule.apiGroups);
    const resources = asStrings(rule.resources);
    const verbs = asStrings(rule.verbs);
    const wildcards = [...apiGroups, ...resources, ...verbs].filter((x) => x.includes('*'));
    if (wildcards.length > 0) violate('rbac-wildcard', `rules[${i}] grants "${wildcards[0]}"; name the groups, resources and verbs`);
    if (rule.nonResourceURLs !== undefined)
      violate('rbac-wildcard', `rules[${i}] names nonResourceURLs; a Role grants namespaced resources only`);
    for (const verb of verbs.filter((v) => privilegedVerbs.has(v))) {
      violate('rbac-privileged-verb', `rules[${i}] grants "${verb}", which lets its holders gain permissions they do not have`);
    }
    for (const resource of resources.filter(isGuardResource)) {
      violate(
        'rbac-guard-resource',
        `rules[${i}] grants access to ${resource}: the namespace's guards, RBAC and tokens are the operator's`,
      );
    }
    checkWrites(i, apiGroups, resources, verbs, violate);
  });
}

function isGuardResource(resource: string): boolean {
  return guardResources.has(resource) || guardResources.has(resource.split('/')[0]!);
}

function checkWrites(i: number, apiGroups: string[], resources: string[], verbs: string[], violate: Violate): void {
  // Wildcards, privileged verbs and the guards are refused above, each for its own reason.
  const writes = verbs.filter((v) => !readVerbs.has(v) && !privilegedVerbs.has(v) && !v.includes('*'));
  if (writes.length === 0) return;
  // No group names no resource: such a rule grants nothing, and is refused rather than trusted.
  const writable = (resource: string) => apiGroups.length > 0 && apiGroups.every((group) => writableResources.has(`${group}/${resource}`));
  for (const resource of resources.filter((r) => !r.includes('*') && !isGuardResource(r) && !writable(r))) {
    violate(
      'rbac-checked-write',
      `rules[${i}] grants ${writes.join(', ')} on ${resource}; a Role may write only Events and Leases: pods could otherwise create at run time what a rendering may not`,
    );
  }
}

export function checkRoleBinding(object: Manifest, policy: RenderPolicy, violate: Violate): void {
  checkRoleBindingFields(object, violate);
  const roleRef = asObject(object.roleRef) ?? {};
  if (roleRef.kind !== 'Role')
    violate(
      'rbac-cluster-role',
      `roleRef names ${String(roleRef.kind)} "${String(roleRef.name)}"; bindings may name Roles of the namespace only`,
    );
  asObjects(object.subjects).forEach((subject, i) => {
    if (subject.kind !== 'ServiceAccount') {
      violate(
        'rbac-subject',
        `subjects[${i}] is the ${String(subject.kind)} "${String(subject.name)}"; only ServiceAccounts of the namespace may be bound`,
      );
    } else if (subject.namespace !== undefined && subject.namespace !== policy.namespace) {
      violate('rbac-subject', `subjects[${i}] is a ServiceAccount of namespace "${String(subject.namespace)}"`);
    }
  });
}
