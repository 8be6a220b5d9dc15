import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from './kube-object.js';
import { OwnWrites, isNewerResourceVersion } from './own-writes.js';

const obj = (resourceVersion: string, note = 'cached'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'ns', resourceVersion },
  data: { note },
});

const noteOf = (answer: KubeObject | 'absent' | undefined) => ((answer as KubeObject).data as { note: string }).note;

describe('own writes', () => {
  it('stand for the cached copy until the cache has one at least as new', () => {
    const own = new OwnWrites();
    own.remember('x', obj('20', 'mine'));
    assert.equal(noteOf(own.freshest('x', obj('19'))), 'mine', 'the cache is behind');
    assert.equal((own.freshest('x', obj('21')) as KubeObject).metadata.resourceVersion, '21', 'the cache caught up');
    assert.equal((own.freshest('x', obj('19')) as KubeObject).metadata.resourceVersion, '19', 'forgotten once caught up');
  });

  it('stand for an absent copy until the watch has gone past the write (then it was deleted since)', () => {
    const own = new OwnWrites();
    own.remember('x', obj('20', 'mine'));
    assert.equal(noteOf(own.freshest('x', 'absent', '18')), 'mine', 'created, not yet seen');
    assert.equal(own.freshest('x', 'absent', '25'), 'absent', 'seen, then deleted');
    own.remember('x', obj('30', 'mine'));
    assert.equal(own.freshest('x', 'absent'), 'absent', 'without the watch position the cache wins');
    own.remember('x', obj('30', 'mine'));
    assert.equal(own.freshest('x', undefined, '10'), undefined, 'a cache that cannot say: the caller reads the server');
  });

  it('drop an answer the cache has not caught up with after keepMs, asked for or swept', () => {
    let now = 0;
    const own = new OwnWrites({ keepMs: 1000, now: () => now });
    own.remember('x', obj('20', 'mine'));
    own.remember('y', obj('21', 'mine'));
    now = 1001;
    assert.equal(noteOf(own.freshest('x', obj('19'))), 'cached', 'a stuck watch: the cache wins');
    own.remember('z', obj('22', 'mine'));
    own.sweep();
    assert.equal(noteOf(own.freshest('y', obj('5'))), 'cached', 'swept');
    assert.equal(noteOf(own.freshest('z', obj('5'))), 'mine');
  });

  it('compare resourceVersions as integers, anything else as not newer', () => {
    assert.equal(isNewerResourceVersion('100', '99'), true);
    assert.equal(isNewerResourceVersion('99', '100'), false);
    assert.equal(isNewerResourceVersion('18446744073709551617', '18446744073709551616'), true);
    assert.equal(isNewerResourceVersion('b', 'a'), false);
    assert.equal(isNewerResourceVersion('5', undefined), false);
  });

  it('drop, on their own, the answers the cache has caught up with, though never asked for again', async () => {
    const cache = new Map<string, KubeObject>();
    const named = (name: string, resourceVersion: string) => ({ ...obj(resourceVersion, 'mine'), metadata: { name, resourceVersion } });
    const own = new OwnWrites({ sweepMs: 20, cacheOf: (o) => ({ cached: cache.get(o.metadata.name) ?? 'absent', seen: '0' }) });
    own.remember('x', named('x', '20'));
    own.remember('y', named('y', '21'));
    cache.set('x', named('x', '20'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(noteOf(own.freshest('x', obj('19'))), 'cached', 'swept: the cache had caught up');
    assert.equal(noteOf(own.freshest('y', 'absent', '0')), 'mine', 'kept: the cache has not seen it');
  });
});
