import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze } from './deep-freeze.js';

test('everything reached is frozen, and an object met twice (an alias, a cycle) ends the walk', () => {
  const shared: { list: number[]; self?: unknown } = { list: [1, 2] };
  shared.self = shared;
  const value = deepFreeze({ a: shared, b: shared, text: 'x' });
  assert.ok(Object.isFrozen(value) && Object.isFrozen(value.a) && Object.isFrozen(value.a.list));
  assert.throws(() => value.a.list.push(3), TypeError);
  assert.equal(deepFreeze(null), null);
});
