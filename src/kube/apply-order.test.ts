import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyGroups } from './apply-order.js';

describe('apply order', () => {
  it('namespaces, then CRDs, then configuration, then workloads, then custom resources', () => {
    const kinds = [
      ['ai.alien6.io/v1', 'Algorithm'],
      ['apps/v1', 'Deployment'],
      ['v1', 'ConfigMap'],
      ['v1', 'Namespace'],
      ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
      ['v1', 'Secret'],
      ['networking.k8s.io/v1', 'Ingress'],
      ['mycompany.com/v1', 'Database'],
      ['v1', 'Service'],
      ['example.com/v1', 'Deployment'],
    ].map(([apiVersion, kind]) => ({ apiVersion: apiVersion!, kind: kind! }));
    assert.deepEqual(
      applyGroups(kinds).map((g) => g.map((k) => k.kind)),
      [
        ['Namespace'],
        ['CustomResourceDefinition'],
        ['Secret'],
        ['ConfigMap'],
        ['Service'],
        ['Deployment'],
        ['Ingress'],
        ['Algorithm', 'Database', 'Deployment'],
      ],
    );
  });
});
