import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capResources, ceilingProblem, defaultResourceCeilings, quantityValue } from './resource-ceilings.js';

const defaults = { cpu: '8', memory: '16Gi', storage: '100Gi', pods: 50 };

test("quantities in preview.yaml's form", () => {
  assert.equal(quantityValue('500m'), 0.5);
  assert.equal(quantityValue('2'), 2);
  assert.equal(quantityValue('1.5'), 1.5);
  assert.equal(quantityValue('512Mi'), 512 * 2 ** 20);
  assert.equal(quantityValue('10G'), 1e10);
  assert.equal(quantityValue('1Pi'), 2 ** 50);
  assert.equal(quantityValue('1e3'), undefined);
  assert.equal(quantityValue('lots'), undefined);
});

test("a repository's resources above the ceilings are cut to them, each with a note", () => {
  const { resources, notes } = capResources(
    { cpu: '100000', memory: '1Pi', storage: '1Pi', pods: 1000, gpu: 64 },
    { cpu: '32', memory: '64Gi', storage: '500Gi', pods: 200, gpu: 8 },
    defaults,
  );
  assert.deepEqual(resources, { cpu: '32', memory: '64Gi', storage: '500Gi', pods: 200, gpu: 8 });
  assert.deepEqual(notes, [
    "resources.cpu 100000 is above the operator's ceiling: cut to 32",
    "resources.memory 1Pi is above the operator's ceiling: cut to 64Gi",
    "resources.storage 1Pi is above the operator's ceiling: cut to 500Gi",
    "resources.pods 1000 is above the operator's ceiling: cut to 200",
    "resources.gpu 64 is above the operator's ceiling: cut to 8",
  ]);
});

test('within the ceilings nothing changes; unset totals keep the quota default unless a ceiling is lower', () => {
  assert.deepEqual(capResources(undefined, defaultResourceCeilings, defaults), { resources: undefined, notes: [] });
  const within = { cpu: '4', memory: '8Gi', pods: 10 };
  assert.deepEqual(capResources(within, defaultResourceCeilings, defaults), { resources: within, notes: [] });
  // The operator's own ceiling below the quota default applies silently: the repository asked for nothing.
  assert.deepEqual(capResources(undefined, { cpu: '2', memory: null, storage: null, pods: 20, gpu: null }, defaults), {
    resources: { cpu: '2', pods: 20 },
    notes: [],
  });
});

test('a GPU ceiling bounds an environment that names no GPU total (no quota would bound it otherwise)', () => {
  const ceilings = { ...defaultResourceCeilings, gpu: 2 };
  assert.deepEqual(capResources({ cpu: '4' }, ceilings, defaults).resources, { cpu: '4', gpu: 2 });
  assert.deepEqual(capResources({ gpu: 1 }, ceilings, defaults).resources, { gpu: 1 });
});

test('the ceilings the policy may set', () => {
  assert.equal(ceilingProblem('cpu', '32'), undefined);
  assert.equal(ceilingProblem('memory', null), undefined);
  assert.equal(ceilingProblem('gpu', 0), undefined);
  assert.match(ceilingProblem('cpu', 32)!, /Kubernetes quantity/);
  assert.match(ceilingProblem('memory', 'a lot')!, /Kubernetes quantity/);
  assert.match(ceilingProblem('pods', 0)!, /at least 1/);
  assert.match(ceilingProblem('gpu', 1.5)!, /whole number/);
});
