import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AlgorithmResource } from '../../constructs/index.js';
import { AlgorithmStatusMemo } from './algorithm-status-memo.js';

const algo = (resourceVersion: string, uid = 'u', stableImage = 'a'): AlgorithmResource => ({
  apiVersion: 'ai.alien6.io/v1',
  kind: 'Algorithm',
  metadata: { name: 'x', uid, resourceVersion },
  spec: { image: 'b' },
  status: { stableImage },
});

describe('status memo', () => {
  it('uses our own newer write until the informer catches up', () => {
    const memo = new AlgorithmStatusMemo();
    memo.remember('ns/x', algo('20', 'u', 'b'));
    assert.equal(memo.freshest('ns/x', algo('19')).status?.stableImage, 'b', 'the informer is behind');
    assert.equal(memo.freshest('ns/x', algo('21')).metadata.resourceVersion, '21', 'the informer caught up');
    assert.equal(memo.freshest('ns/x', algo('19')).metadata.resourceVersion, '19', 'forgotten once caught up');
  });

  it('ignores a write to another object of the same name, and non-numeric versions', () => {
    const memo = new AlgorithmStatusMemo();
    memo.remember('ns/x', algo('20', 'old'));
    assert.equal(memo.freshest('ns/x', algo('5', 'new')).metadata.uid, 'new');
    memo.remember('ns/x', algo('b'));
    assert.equal(memo.freshest('ns/x', algo('a')).metadata.resourceVersion, 'a');
  });
});
