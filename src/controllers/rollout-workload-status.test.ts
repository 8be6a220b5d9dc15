import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isControlledBy, type KubeObject } from '../kube/index.js';
import { summarizeWorkload } from './rollout-workload-status.js';

const deployment = (status: object, generation = 2, replicas = 3): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', generation, ownerReferences: [{ apiVersion: 'x/v1', kind: 'X', name: 'o', uid: 'u1', controller: true }] },
  spec: { replicas, template: { spec: { containers: [{ image: 'img:1' }] } } },
  status,
});

describe('workload status', () => {
  it('is rolled out only when the current generation is observed and every replica is updated and available', () => {
    assert.equal(
      summarizeWorkload(deployment({ observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 }))
        .rolledOut,
      true,
    );
    assert.equal(
      summarizeWorkload(deployment({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 })).rolledOut,
      false,
    );
    assert.equal(
      summarizeWorkload(deployment({ observedGeneration: 2, replicas: 4, updatedReplicas: 3, availableReplicas: 4 })).rolledOut,
      false,
      'old pods remain',
    );
    const s = summarizeWorkload(
      deployment({
        observedGeneration: 2,
        readyReplicas: 1,
        conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'took too long' }],
      }),
    );
    assert.equal(s.failure, 'took too long');
    assert.equal(s.ready, 1);
    assert.equal(s.image, 'img:1');
  });

  it('a StatefulSet is rolled out when its revisions agree', () => {
    const sts = (current: string) => ({
      ...deployment({
        observedGeneration: 2,
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        currentRevision: current,
        updateRevision: 'b',
      }),
      kind: 'StatefulSet',
    });
    assert.equal(summarizeWorkload(sts('a')).rolledOut, false);
    assert.equal(summarizeWorkload(sts('b')).rolledOut, true);
  });

  it('knows its controller by uid', () => {
    assert.equal(isControlledBy(deployment({}), 'u1'), true);
    assert.equal(isControlledBy(deployment({}), 'u2'), false);
    assert.equal(isControlledBy(deployment({}), undefined), false);
  });
});
