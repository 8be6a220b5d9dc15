import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../kube/clock.js';
import type { KubeObject } from '../kube/kube-object.js';
import { isOlder, newer, recordedUpdate, UpdateMemory } from './environment-recency.js';

describe('isOlder', () => {
  it('is true only for a strictly older time; equal, absent or unreadable times are not older', () => {
    assert.equal(isOlder('2024-01-01T00:00:00Z', '2024-01-01T00:00:01Z'), true);
    assert.equal(isOlder('2024-01-01T00:00:01Z', '2024-01-01T00:00:00Z'), false);
    assert.equal(isOlder('2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'), false);
    assert.equal(isOlder('2024-01-01T01:00:00+01:00', '2024-01-01T00:00:00.000Z'), false, 'compared as times, not strings');
    assert.equal(isOlder(undefined, '2024-01-01T00:00:00Z'), false);
    assert.equal(isOlder('2024-01-01T00:00:00Z', undefined), false);
    assert.equal(isOlder('garbage', '2024-01-01T00:00:00Z'), false);
  });

  it('newer picks the later of two, either may be absent', () => {
    assert.equal(newer('2024-01-01T00:00:00Z', '2024-01-01T00:00:05Z'), '2024-01-01T00:00:05Z');
    assert.equal(newer('2024-01-01T00:00:05Z', '2024-01-01T00:00:00Z'), '2024-01-01T00:00:05Z');
    assert.equal(newer(undefined, '2024-01-01T00:00:00Z'), '2024-01-01T00:00:00Z');
    assert.equal(newer('2024-01-01T00:00:00Z', undefined), '2024-01-01T00:00:00Z');
  });
});

describe('recordedUpdate', () => {
  it('reads spec.pullRequest.updatedAt of an environment object', () => {
    const spec = { pullRequest: { updatedAt: '2024-01-01T00:00:00Z' } };
    const object = { apiVersion: 'v', kind: 'k', metadata: { name: 'x' }, spec } as KubeObject;
    assert.equal(recordedUpdate(object), '2024-01-01T00:00:00Z');
    assert.equal(recordedUpdate({ apiVersion: 'v', kind: 'k', metadata: { name: 'x' } }), undefined);
    assert.equal(recordedUpdate(undefined), undefined);
  });
});

describe('UpdateMemory', () => {
  it('keeps the newest update per environment, never an older one', () => {
    const memory = new UpdateMemory();
    memory.accept('pr-1', '2024-01-01T00:00:05Z');
    memory.accept('pr-1', '2024-01-01T00:00:01Z');
    assert.equal(memory.newest('pr-1'), '2024-01-01T00:00:05Z');
    memory.accept('pr-1', undefined);
    assert.equal(memory.newest('pr-1'), '2024-01-01T00:00:05Z');
    assert.equal(memory.newest('pr-2'), undefined);
  });

  it('remembers where an approval holds (head and base), for its own repository only (two may map to one name)', () => {
    const memory = new UpdateMemory();
    const at = { headSha: 'a'.repeat(40), baseRef: 'main' };
    memory.accept('pr-1', '2024-01-01T00:00:05Z');
    memory.approve('pr-1', { owner: 'Acme', name: 'Shop' }, at);
    assert.deepEqual(memory.approvedAt('pr-1', { owner: 'acme', name: 'shop' }), at);
    assert.equal(memory.approvedAt('pr-1', { owner: 'mallory', name: 'shop' }), undefined);
    assert.equal(memory.newest('pr-1'), '2024-01-01T00:00:05Z', 'the update stays');
    memory.accept('pr-1', '2024-01-01T00:00:06Z');
    assert.deepEqual(memory.approvedAt('pr-1', { owner: 'acme', name: 'shop' }), at, 'and so does the approval');
    memory.revoke('pr-1');
    assert.equal(memory.approvedAt('pr-1', { owner: 'acme', name: 'shop' }), undefined, 'until it is taken away');
    assert.equal(memory.newest('pr-1'), '2024-01-01T00:00:06Z', 'the update stays then too');
  });

  it('is bounded: by its window and by a number of environments, the least recently accepted first', () => {
    const clock = new FakeClock(0);
    const memory = new UpdateMemory({ windowMs: 1000, maxEntries: 2, clock });
    memory.accept('a', '2024-01-01T00:00:00Z');
    memory.accept('b', '2024-01-01T00:00:00Z');
    memory.accept('c', '2024-01-01T00:00:00Z');
    assert.deepEqual(
      ['a', 'b', 'c'].map((n) => memory.newest(n) !== undefined),
      [false, true, true],
    );
    clock.advance(1000);
    assert.equal(memory.newest('b'), undefined, 'past the window');
  });
});
