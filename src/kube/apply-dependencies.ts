// Which objects of a set a server-side dry run cannot judge: a dry run persists nothing, so an
// object whose admission looks up another object the same set creates would be refused for
// that alone — a RoleBinding of a new Role (the RBAC escalation check reads the Role unless the
// writer may `bind`), a Pod of a new ServiceAccount (the ServiceAccount admission reads it), an
// object of a kind a CRD of the set defines (not served yet). Such objects are checked only by
// their real write, which comes after what they need (apply-order.ts).
import { groupOf, identityOf, type KubeObject } from './kube-object.js';

const rbacGroup = 'rbac.authorization.k8s.io';

/**
 * Whether `obj` can only be judged once the set's writes are made: it needs an object in
 * `created` (identities of the set's objects that do not exist yet), or its kind is defined by
 * one of `crds` (the set's CustomResourceDefinitions that are written).
 */
export function needsSetWrittenFirst(obj: KubeObject, created: ReadonlySet<string>, crds: readonly KubeObject[]): boolean {
  const group = groupOf(obj.apiVersion);
  const namespace = obj.metadata.namespace;
  if (group === rbacGroup && obj.kind === 'RoleBinding') {
    const roleRef = obj.roleRef as { kind?: string; name?: string } | undefined;
    if (roleRef?.kind === 'Role' && roleRef.name) {
      return created.has(identityOf({ apiVersion: `${rbacGroup}/v1`, kind: 'Role', namespace, name: roleRef.name }));
    }
  }
  if (group === '' && obj.kind === 'Pod') {
    // A pod that names no account runs as `default`, which a set may create too (a new namespace's).
    const spec = obj.spec as { serviceAccountName?: string; serviceAccount?: string } | undefined;
    const account = spec?.serviceAccountName || spec?.serviceAccount || 'default';
    return created.has(identityOf({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: account }));
  }
  return crds.some((crd) => {
    const spec = crd.spec as { group?: string; names?: { kind?: string } } | undefined;
    return spec?.group === group && spec.names?.kind === obj.kind;
  });
}
