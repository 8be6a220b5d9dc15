// RBAC a rendering may contain: Roles and RoleBindings in its namespace, for its own
// ServiceAccounts, granting ordinary namespaced resources. A Role is checked for what it grants,
// not just where: one that reaches the namespace's guards or RBAC lets a pod lift its own
// isolation, budget or permissions; one that writes what this policy checks (Services,
// Ingresses, Certificates, Secrets, ...) lets a pod create at run time what a rendering may not.
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
/** Refused for writes (with their subresources, e.g. services/status): kinds this policy checks at render time. */
const checkedResources = new Set([
  'services',
  'endpoints',
  'endpointslices',
  'ingresses',
  'secrets',
  'serviceaccounts',
  'persistentvolumeclaims',
  'certificates',
  'certificaterequests',
  'issuers',
]);
const writeVerbs = new Set(['create', 'update', 'patch']);
/** ServiceAccounts may not be deleted either: the namespace's `default` one is a guard, and deleted it comes back mounting tokens. */
const deleteVerbs = new Set(['delete', 'deletecollection']);
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
    for (const resource of resources.filter((r) => guardResources.has(r) || guardResources.has(r.split('/')[0]!))) {
      violate(
        'rbac-guard-resource',
        `rules[${i}] grants access to ${resource}: the namespace's guards, RBAC and tokens are the operator's`,
      );
    }
    const deletes = verbs.filter((v) => deleteVerbs.has(v));
    if (deletes.length > 0 && resources.some((r) => r.split('/')[0] === 'serviceaccounts')) {
      const why = "the namespace's default ServiceAccount is the operator's";
      violate('rbac-guard-resource', `rules[${i}] grants ${deletes.join(', ')} on serviceaccounts: ${why}`);
    }
    const writes = verbs.filter((v) => writeVerbs.has(v));
    if (writes.length === 0) return;
    for (const resource of resources.filter((r) => !guardResources.has(r) && checkedResources.has(r.split('/')[0]!))) {
      violate(
        'rbac-checked-write',
        `rules[${i}] grants ${writes.join(', ')} on ${resource}, which would let pods create at run time what a rendering may not`,
      );
    }
  });
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
