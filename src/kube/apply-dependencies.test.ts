import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { needsSetWrittenFirst } from './apply-dependencies.js';
import { identityOf, type KubeObject } from './kube-object.js';

const ns = 'pr-1';
const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader', namespace: ns } };
const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'worker', namespace: ns } };
const binding = (kind: string, name: string): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'b', namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
  subjects: [],
});
const pod = (serviceAccountName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: ns },
  spec: { serviceAccountName, containers: [] },
});
const crd: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' } },
};

describe('objects a dry run cannot judge before the set is written', () => {
  const created = new Set([identityOf(role), identityOf(account)]);

  it('a RoleBinding of a Role the set creates; not one of an existing Role or of a ClusterRole', () => {
    assert.equal(needsSetWrittenFirst(binding('Role', 'reader'), created, []), true);
    assert.equal(needsSetWrittenFirst(binding('Role', 'reader'), new Set(), []), false);
    assert.equal(needsSetWrittenFirst(binding('ClusterRole', 'reader'), created, []), false);
  });

  it('a Pod of a ServiceAccount the set creates, the default one included; not one of another account', () => {
    assert.equal(needsSetWrittenFirst(pod('worker'), created, []), true);
    assert.equal(needsSetWrittenFirst(pod('builder'), created, []), false);
    assert.equal(needsSetWrittenFirst(pod(), created, []), false);
    const defaultAccount = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } };
    assert.equal(needsSetWrittenFirst(pod(), new Set([identityOf(defaultAccount)]), []), true);
  });

  it('an object of a kind a CRD of the set defines; not a same-named kind of another group', () => {
    const widget = (apiVersion: string): KubeObject => ({ apiVersion, kind: 'Widget', metadata: { name: 'w', namespace: ns } });
    assert.equal(needsSetWrittenFirst(widget('example.com/v1'), new Set(), [crd]), true);
    assert.equal(needsSetWrittenFirst(widget('other.com/v1'), new Set(), [crd]), false);
  });
});
