import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extendedResourceRequests, quotaExtendedResources } from './guard-extended-resources.js';

test('the extended resources a quota bounds, by its requests. keys (not its native ones)', () => {
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'preview-quota' },
    spec: { hard: { 'requests.cpu': '2', 'limits.memory': '4Gi', pods: '20', 'requests.nvidia.com/gpu': '2', 'amd.com/gpu': '1' } },
  };
  assert.deepEqual(quotaExtendedResources(quota), ['nvidia.com/gpu', 'amd.com/gpu']);
  assert.deepEqual(quotaExtendedResources({ ...quota, spec: {} }), []);
});

test('a pod asks for an extended resource when a container requests or limits it above zero', () => {
  const spec = {
    initContainers: [{ resources: { requests: { 'example.com/fpga': '1' } } }],
    containers: [
      { resources: { limits: { cpu: '1', 'nvidia.com/gpu': 2, 'vendor.io/zero': '0', 'node-role.kubernetes.io/control-plane': '1' } } },
    ],
  };
  assert.deepEqual(extendedResourceRequests(spec).sort(), ['example.com/fpga', 'nvidia.com/gpu']);
});
