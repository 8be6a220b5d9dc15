import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CacheReader, KubeObject } from '../kube/index.js';
import { namespaceInformerOptions, namespaceKind, namespaceTerminating } from './namespace-terminating.js';

function cache(...namespaces: KubeObject[]): CacheReader {
  const byName = new Map(namespaces.map((n) => [n.metadata.name!, n]));
  return { kind: namespaceKind, get: (key) => byName.get(key), lookup: (key) => byName.get(key) ?? 'absent', list: () => [...byName.values()] };
}

test('a namespace with a deletionTimestamp, or phase Terminating, is going; an active or unknown one is not', () => {
  const namespaces = cache(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'active' }, status: { phase: 'Active' } } as KubeObject,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'deleted', deletionTimestamp: '2026-03-01T10:00:00Z' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'terminating' }, status: { phase: 'Terminating' } } as KubeObject,
  );
  assert.equal(namespaceTerminating(namespaces, 'active'), false);
  assert.equal(namespaceTerminating(namespaces, 'deleted'), true);
  assert.equal(namespaceTerminating(namespaces, 'terminating'), true);
  assert.equal(namespaceTerminating(namespaces, 'unknown'), false, 'not in the cache: the apply finds out');
  assert.equal(namespaceTerminating(undefined, 'deleted'), false, 'no cache: as before');
});

test('the namespace informer follows the controller\'s scope', () => {
  assert.deepEqual(namespaceInformerOptions(undefined), {});
  assert.deepEqual(namespaceInformerOptions('team-a'), { fieldSelector: 'metadata.name=team-a' });
});
