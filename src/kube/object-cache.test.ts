import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from './kube-object.js';
import { objectKey, parseKey, identityOf } from './kube-object.js';
import { ObjectCache } from './object-cache.js';

const obj = (name: string, namespace: string | undefined, labels: Record<string, string> = {}, owners: string[] = []): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels, ownerReferences: owners.map((uid) => ({ apiVersion: 'v1', kind: 'X', name: 'o', uid })) },
});

describe('object cache', () => {
  it('keys objects like client-go and keeps label, owner, namespace and custom indexes in step', () => {
    const cache = new ObjectCache();
    cache.addIndex('byFirstLetter', (o) => [o.metadata.name![0]!]);
    cache.set(obj('a1', 'ns1', { app: 'web' }, ['u1']));
    cache.set(obj('a2', 'ns2', { app: 'web' }));
    cache.set(obj('b1', undefined, { app: 'db' }, ['u1']));
    assert.deepEqual(cache.keys().sort(), ['b1', 'ns1/a1', 'ns2/a2']);
    assert.deepEqual(cache.byLabel('app', 'web').map(objectKey).sort(), ['ns1/a1', 'ns2/a2']);
    assert.deepEqual(cache.byOwner('u1').map(objectKey).sort(), ['b1', 'ns1/a1']);
    assert.deepEqual(cache.list('ns1').map(objectKey), ['ns1/a1']);
    assert.deepEqual(cache.byIndex('byFirstLetter', 'a').map(objectKey).sort(), ['ns1/a1', 'ns2/a2']);

    const old = cache.set(obj('a1', 'ns1', { app: 'db' }));
    assert.deepEqual(old?.metadata.labels, { app: 'web' });
    assert.deepEqual(cache.byLabel('app', 'web').map(objectKey), ['ns2/a2'], 'old index values removed');
    assert.deepEqual(cache.byOwner('u1').map(objectKey), ['b1']);
    cache.set({ ...obj('b1', undefined, { app: 'db' }, ['u1']), data: { changed: 'yes' } });
    assert.deepEqual(
      cache.byLabel('app', 'db').map(objectKey).sort(),
      ['b1', 'ns1/a1'],
      'an update with the same labels stays indexed once',
    );
    assert.deepEqual(
      cache.byOwner('u1').map((o) => (o as { data?: unknown }).data),
      [{ changed: 'yes' }],
    );
    cache.delete('b1');
    assert.deepEqual(cache.byLabel('app', 'db').map(objectKey), ['ns1/a1']);
    assert.equal(cache.size, 2);
    assert.equal(cache.delete('missing'), undefined);
  });

  it('parses keys back and compares identities across versions', () => {
    assert.deepEqual(parseKey('ns/name'), { namespace: 'ns', name: 'name' });
    assert.deepEqual(parseKey('cluster-scoped'), { name: 'cluster-scoped' });
    assert.equal(
      identityOf({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', name: 'h', namespace: 'n' }),
      identityOf({ apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h', namespace: 'n' } }),
    );
  });
});
