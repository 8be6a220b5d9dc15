import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NotFoundError, type CacheReader, type KubeObject, type ObjectClient } from '../kube/index.js';
import {
  createsAny,
  ensureNamespaceActive,
  inTerminatingNamespace,
  NamespaceTerminatingError,
  namespaceInformerOptions,
  namespaceKind,
  namespaceTerminating,
} from './namespace-terminating.js';

function cache(...namespaces: KubeObject[]): CacheReader {
  const byName = new Map(namespaces.map((n) => [n.metadata.name!, n]));
  return {
    kind: namespaceKind,
    get: (key) => byName.get(key),
    lookup: (key) => byName.get(key) ?? 'absent',
    list: () => [...byName.values()],
  };
}

/** A client whose only answer is the namespace `live` (or a 404). */
function liveNamespace(live: KubeObject | undefined): ObjectClient {
  return {
    get: async () => {
      if (!live) throw new NotFoundError('namespaces "x" not found', 404, 'NotFound');
      return live;
    },
  } as unknown as ObjectClient;
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

test("an object in a namespace being deleted is one a controller's watches ignore; the namespace itself is not", () => {
  const going = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-1', deletionTimestamp: '2026-03-01T10:00:00Z' } };
  const ignore = inTerminatingNamespace(cache(going, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-2' } }));
  const deployment = (namespace: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api', namespace } });
  assert.equal(ignore(deployment('pr-1')), true);
  assert.equal(ignore(deployment('pr-2')), false);
  assert.equal(ignore(going), false, 'a cluster-scoped object (the namespace: its deletion must wake)');
});

test("the namespace informer follows the controller's scope", () => {
  assert.deepEqual(namespaceInformerOptions(undefined), {});
  assert.deepEqual(namespaceInformerOptions('team-a'), { fieldSelector: 'metadata.name=team-a' });
});

test('before a create the API server is asked: a namespace being deleted throws, an active or missing one does not', async () => {
  const going = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-1', deletionTimestamp: '2026-03-01T10:00:00Z' } };
  await assert.rejects(ensureNamespaceActive(liveNamespace(going), 'pr-1'), NamespaceTerminatingError);
  await ensureNamespaceActive(liveNamespace({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-1' } }), 'pr-1');
  await ensureNamespaceActive(liveNamespace(undefined), 'pr-1');
});

test('a create is one of an object a cache of its kind does not hold', () => {
  const deployments: CacheReader = {
    kind: { apiVersion: 'apps/v1', kind: 'Deployment' },
    get: () => undefined,
    lookup: (key) =>
      key === 'ns/kept' ? { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'kept', namespace: 'ns' } } : 'absent',
    list: () => [],
  };
  const deployment = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: 'ns' } });
  assert.equal(createsAny([deployments], [deployment('kept')]), false);
  assert.equal(createsAny([deployments], [deployment('kept'), deployment('gone')]), true);
  assert.equal(
    createsAny([deployments], [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'ns' } }]),
    false,
    'no cache: not judged',
  );
});
