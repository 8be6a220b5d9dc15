import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createMergePatch, jsonEqual } from './json-merge-patch.js';

describe('json merge patch', () => {
  it('is undefined for equal values, whatever the key order', () => {
    assert.equal(createMergePatch({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }), undefined);
    assert.equal(jsonEqual({ a: undefined, b: 1 }, { b: 1 }), true);
  });

  it('carries only changed members, nulls for removed ones, arrays whole', () => {
    const patch = createMergePatch(
      { phase: 'Deploying', url: 'https://x', conditions: [{ type: 'Ready', status: 'False' }], nested: { keep: 1, drop: 2 } },
      { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }], nested: { keep: 1 } },
    );
    assert.deepEqual(patch, { phase: 'Ready', url: null, conditions: [{ type: 'Ready', status: 'True' }], nested: { drop: null } });
  });

  it('replaces a non-object whole', () => {
    assert.deepEqual(createMergePatch(undefined, { a: 1 }), { a: 1 });
    assert.deepEqual(createMergePatch({ a: 1 }, { a: { b: 2 } }), { a: { b: 2 } });
    assert.deepEqual(createMergePatch({ a: { b: 2 } }, { a: 'x' }), { a: 'x' });
  });
});
