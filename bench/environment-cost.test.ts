import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AuditEvent } from '../test/cluster/audit-log.js';
import { costFigures, costNotes, objectsApplied } from './environment-cost.js';
import { formatGap } from './figures.js';

/** One environment's writes ("verb resource name[/subresource]"): its PreviewEnvironment, namespace (twice) and Algorithm. */
function environment(ns: string): AuditEvent[] {
  const pe = `previewenvironments ${ns}`;
  const list = [`patch ${pe}`, `patch ${pe}/status`, `patch ${pe}/status`, `patch namespaces ${ns}`, `patch namespaces ${ns}`];
  return [...list, 'patch algorithms api', 'patch algorithms api/status', 'create events e1'].map((w) => {
    const [verb, resource, ref] = w.split(' ') as [string, string, string];
    const [name, subresource] = ref.split('/');
    const namespace = ['namespaces', 'previewenvironments'].includes(resource) ? undefined : ns;
    return { verb, objectRef: { resource, name, namespace, subresource }, user: { username: 'op' } } as AuditEvent;
  });
}
const writes = environment('ns-1');

test('objects applied are distinct objects, not statuses, Events or the PreviewEnvironment', () => {
  assert.equal(objectsApplied(writes), 2);
});

test('per environment: writes against objects + 2, CPU ms and GitHub requests against their targets, notes by verb/resource', () => {
  const githubRequests = [{ method: 'GET', path: '/x', status: 304 }];
  const window = { environments: 2, writes: [...writes, ...environment('ns-2')], githubRequests, cpuSeconds: 0.05 };
  const [w, cpu, gh] = costFigures(4, 'burst 2', window);
  assert.deepEqual([w!.value, w!.target!.value, cpu!.value, gh!.value], [8, 4, 25, 0.5]);
  assert.equal(formatGap(w!), 'missed by 4 (2.00× target)');
  assert.equal(formatGap(gh!), 'met, 6.50 to spare');
  const notes = costNotes('burst 2', window).join('\n');
  assert.match(notes, /patch previewenvironments\/status 2, patch namespaces 2, patch previewenvironments 1, patch algorithms 1, /);
  assert.match(notes, /patch algorithms\/status 1, create events 1\./);
  assert.match(notes, /GET \/x \(304\) 0\.5/);
});
