// Fields the API server would refuse, checked before anything is written for the objects its dry
// run cannot judge: a RoleBinding of a Role the same rendering creates, a Pod of a ServiceAccount
// the same rendering creates (src/kube/apply-dependencies.ts). Those reach the API server only at
// their real write, after the objects before them in apply order; a field refused there would
// leave the rendering half-applied until the controller undoes it. Only what such objects
// commonly get wrong is checked here, the way the API server's validation checks it.
import type { Manifest } from '../../constructs/index.js';
import { asObject, asObjects } from './guard-json.js';
import type { Violate } from './guard-rendered-objects.js';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const restartPolicies = new Set(['Always', 'OnFailure', 'Never']);

/** A DNS-1123 subdomain (names of ServiceAccounts and most objects). */
export function isDnsSubdomain(value: unknown): boolean {
  return typeof value === 'string' && value.length <= 253 && dnsSubdomain.test(value);
}

/** Why `value` is no valid name of a Role (a path segment), or undefined. */
export function invalidRoleName(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is required';
  if (value === '.' || value === '..' || /[/%]/.test(value)) return `"${value}" may not be '.', '..' or contain '/' or '%'`;
  return undefined;
}

/** A RoleBinding's roleRef and subjects as the API server validates them (which Role and whom is policy-rbac.ts's). */
export function checkRoleBindingFields(object: Manifest, violate: Violate): void {
  const roleRef = asObject(object.roleRef) ?? {};
  if (roleRef.apiGroup !== 'rbac.authorization.k8s.io') {
    const group = JSON.stringify(roleRef.apiGroup) ?? 'missing';
    violate('invalid-field', `roleRef.apiGroup is ${group}; it must be "rbac.authorization.k8s.io"`);
  }
  const roleName = invalidRoleName(roleRef.name);
  if (roleName) violate('invalid-field', `roleRef.name ${roleName}`);
  asObjects(object.subjects).forEach((subject, i) => {
    if (subject.kind !== 'ServiceAccount') return;
    if (subject.apiGroup !== undefined && subject.apiGroup !== '') {
      const group = JSON.stringify(subject.apiGroup);
      violate('invalid-field', `subjects[${i}].apiGroup is ${group}; a ServiceAccount subject has the core group ""`);
    }
    if (!isDnsSubdomain(subject.name)) {
      violate('invalid-field', `subjects[${i}].name ${JSON.stringify(subject.name) ?? '(missing)'} is not a ServiceAccount name`);
    }
  });
}

/** A bare Pod's ServiceAccount, containers and restart policy as the API server validates them. */
export function checkPodFields(object: Manifest, violate: Violate): void {
  const spec = asObject(object.spec) ?? {};
  for (const field of ['serviceAccountName', 'serviceAccount']) {
    if (spec[field] !== undefined && spec[field] !== '' && !isDnsSubdomain(spec[field])) {
      violate('invalid-field', `spec.${field} ${JSON.stringify(spec[field])} is not a ServiceAccount name`);
    }
  }
  if (spec.restartPolicy !== undefined && !restartPolicies.has(String(spec.restartPolicy))) {
    violate('invalid-field', `spec.restartPolicy ${JSON.stringify(spec.restartPolicy)} must be Always, OnFailure or Never`);
  }
  if (asObjects(spec.containers).length === 0) violate('invalid-field', 'spec.containers must name at least one container');
  const names = new Set<unknown>();
  for (const field of ['initContainers', 'containers']) {
    asObjects(spec[field]).forEach((container, i) => {
      const at = `spec.${field}[${i}]`;
      if (typeof container.name !== 'string' || !dnsLabel.test(container.name) || container.name.length > 63) {
        violate('invalid-field', `${at}.name ${JSON.stringify(container.name) ?? '(missing)'} is not a DNS label`);
      } else if (names.has(container.name)) {
        violate('invalid-field', `${at}.name "${container.name}" is used by another container of the pod`);
      }
      names.add(container.name);
      if (typeof container.image !== 'string' || container.image.trim() === '') violate('invalid-field', `${at}.image is required`);
    });
  }
}
