import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AlgorithmResource } from '../../constructs/index.js';
import { AlgorithmWorkloadMemo } from './algorithm-workload-memo.js';

const algorithm = (image: string, resourceVersion: string): AlgorithmResource => ({
  apiVersion: 'ai.alien6.io/v1',
  kind: 'Algorithm',
  metadata: { name: 'api', namespace: 'pr-1', uid: 'u-1', generation: 1, resourceVersion },
  spec: { image, replicas: 1 },
});

describe('AlgorithmWorkloadMemo', () => {
  it('hands out the same objects for the same inputs, whatever else of the Algorithm moved (its status, its resourceVersion)', () => {
    const memo = new AlgorithmWorkloadMemo();
    const first = memo.render('pr-1/api', algorithm('registry.example.com/api:1', '10'), { stableImage: 'registry.example.com/api:1' });
    const again = memo.render('pr-1/api', algorithm('registry.example.com/api:1', '11'), { stableImage: 'registry.example.com/api:1' });
    assert.ok(first.length >= 3, first.map((o) => o.kind).join(', '));
    assert.notEqual(again, first, 'a new array: the caller may add to it');
    assert.deepEqual(
      again.map((o, i) => o === first[i]),
      first.map(() => true),
      'the same objects',
    );
  });

  it('renders again when the spec or the options change, or once forgotten', () => {
    const memo = new AlgorithmWorkloadMemo();
    const image = (objects: readonly { kind: string; spec?: unknown }[]) =>
      JSON.stringify(objects.find((o) => o.kind === 'Deployment')?.spec).match(/api:\d/)?.[0];
    const one = memo.render('pr-1/api', algorithm('registry.example.com/api:1', '10'), {});
    assert.equal(image(one), 'api:1');
    assert.equal(image(memo.render('pr-1/api', algorithm('registry.example.com/api:2', '12'), {})), 'api:2', 'a new spec');
    const canary = memo.render('pr-1/api', algorithm('registry.example.com/api:2', '12'), { canary: { image: 'x/api:3', replicas: 1 } });
    assert.equal(canary.filter((o) => o.kind === 'Deployment').length, 2, 'new options: the canary track');
    const before = memo.render('pr-1/api', algorithm('registry.example.com/api:2', '12'), {});
    memo.forget('pr-1/api');
    assert.notEqual(memo.render('pr-1/api', algorithm('registry.example.com/api:2', '12'), {})[0], before[0]);
  });
});
