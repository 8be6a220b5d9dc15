import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FieldSetInterner } from './field-set-interner.js';
import type { FieldsNode } from './managed-fields.js';

const spec = { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } } } } };
/** A Deployment's field set as the API server sends it, owned by `uid`: parsed anew each time, as from a watch. */
const fieldSet = (uid: string): FieldsNode =>
  JSON.parse(JSON.stringify({ 'f:metadata': { 'f:ownerReferences': { [`k:{"uid":"${uid}"}`]: {} } }, 'f:spec': spec }));

describe('FieldSetInterner', () => {
  it('hands out one frozen copy per content, sharing equal subtrees of different field sets', () => {
    const interner = new FieldSetInterner();
    const a = interner.intern(fieldSet('u-1'));
    assert.deepEqual(a, fieldSet('u-1'), 'the content is unchanged');
    assert.equal(interner.intern(fieldSet('u-1')), a, 'equal field sets: one copy');
    const b = interner.intern(fieldSet('u-2'));
    assert.notEqual(b, a);
    assert.deepEqual(b, fieldSet('u-2'));
    assert.equal(b['f:spec'], a['f:spec'], 'what they have in common is shared');
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a['f:spec']));
    assert.equal(
      interner.intern({ 'f:metadata': { 'f:labels': {} } })['f:metadata'],
      interner.intern({ 'f:metadata': { 'f:labels': {} } })['f:metadata'],
    );
  });

  it('leaves anything but a tree of objects as it is', () => {
    const odd = { 'f:spec': { 'f:replicas': 1 } } as unknown as FieldsNode;
    assert.equal(new FieldSetInterner().intern(odd), odd);
    assert.ok(!Object.isFrozen(odd));
  });

  it('starts afresh past its bound, and what it handed out stays right', () => {
    const interner = new FieldSetInterner(8);
    const first = interner.intern(fieldSet('u-1'));
    for (let i = 2; i < 10; i++) interner.intern(fieldSet(`u-${i}`));
    assert.ok(interner.size <= 8);
    assert.deepEqual(first, fieldSet('u-1'));
    assert.deepEqual(interner.intern(fieldSet('u-1')), fieldSet('u-1'));
  });
});
