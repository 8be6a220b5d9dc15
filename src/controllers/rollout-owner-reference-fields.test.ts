import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appliedFieldsCover, type KubeObject } from '../kube/index.js';
import { expandOwnerReferenceFields } from './rollout-owner-reference-fields.js';

const owner = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', name: 'reco', uid: 'u-1', controller: true, blockOwnerDeletion: true };
const desired: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', ownerReferences: [owner] }, data: { a: '1' } };
// As the API server records an applied ownerReference (an atomic struct): the element, owned whole.
const live: KubeObject = {
  ...desired,
  metadata: {
    ...desired.metadata,
    managedFields: [{
      manager: 'preview-operator', operation: 'Apply', fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {} }, 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"u-1"}': {} } } },
    }],
  },
};

describe('owner reference fields', () => {
  it('makes an atomic ownerReference element count as owned', () => {
    assert.equal(appliedFieldsCover(live, desired, 'preview-operator'), false, 'the gap this works around');
    assert.equal(appliedFieldsCover(expandOwnerReferenceFields(live), desired, 'preview-operator'), true);
  });

  it('still sees a changed owner and leaves objects without owner fields alone', () => {
    const other = { ...desired, metadata: { ...desired.metadata, ownerReferences: [{ ...owner, uid: 'u-2' }] } };
    assert.equal(appliedFieldsCover(expandOwnerReferenceFields(live), other, 'preview-operator'), false);
    assert.equal(expandOwnerReferenceFields(desired), desired);
    assert.deepEqual(live.metadata.managedFields![0]!.fieldsV1!['f:metadata'], { 'f:ownerReferences': { 'k:{"uid":"u-1"}': {} } }, 'the input is not modified');
  });
});
