import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AlgorithmSpec } from '../../constructs/index.js';
import { canaryReplicas, concludeRollout, planRollout, replicaWeight } from './rollout-plan.js';

const v1 = 'reco:1';
const v2 = 'reco:2';
const spec = (image: string, canaryWeight = 20): AlgorithmSpec => ({
  image,
  replicas: 3,
  lifecycle: { canaryWeight, successThreshold: 0.99, rollbackOnDrift: true },
});
const now = '2026-01-01T00:00:00.000Z';

describe('rollout plan', () => {
  it('deploys the first image straight to the stable track', () => {
    const plan = planRollout(spec(v1), undefined, {}, now);
    assert.equal(plan.mode, 'steady');
    assert.equal(plan.state.stableImage, v1);
  });

  it('starts a canary for a new image when canaryWeight > 0, and resumes it from status', () => {
    const started = planRollout(spec(v2), { stableImage: v1 }, {}, now);
    assert.equal(started.mode, 'canary');
    assert.equal(started.started, true);
    assert.deepEqual(started.state, { stableImage: v1, canaryImage: v2, canaryStartTime: now });
    const lastAnalysis = { consecutiveSuccesses: 2, time: now };
    const resumed = planRollout(spec(v2), { ...started.state, lastAnalysis }, {}, '2026-01-01T00:05:00.000Z');
    assert.equal(resumed.started, false);
    assert.equal(resumed.state.canaryStartTime, now);
    assert.deepEqual(resumed.state.lastAnalysis, lastAnalysis);
  });

  it('restarts the analysis when the canary image changes mid-rollout', () => {
    const plan = planRollout(
      spec('reco:3'),
      { stableImage: v1, canaryImage: v2, canaryStartTime: now, lastAnalysis: { consecutiveSuccesses: 2 } },
      {},
      'later',
    );
    assert.equal(plan.started, true);
    assert.equal(plan.state.canaryImage, 'reco:3');
    assert.equal(plan.state.lastAnalysis, undefined);
  });

  it('canaryWeight 0 is a plain rolling update', () => {
    const plan = planRollout(spec(v2, 0), { stableImage: v1 }, {}, now);
    assert.equal(plan.mode, 'steady');
    assert.equal(plan.state.stableImage, v2);
  });

  it('takes the stable image from the running Deployment when status has none', () => {
    assert.equal(planRollout(spec(v2), undefined, { image: v1 }, now).mode, 'canary');
  });

  it('promotes, rolls back (only with rollbackOnDrift), or pauses', () => {
    const plan = planRollout(spec(v2), { stableImage: v1 }, {}, now);
    const promoted = concludeRollout(plan, 'promote', true);
    assert.equal(promoted.outcome, 'promoted');
    assert.deepEqual(promoted.plan.state, { stableImage: v2 });
    const rolledBack = concludeRollout(plan, 'fail', true);
    assert.equal(rolledBack.outcome, 'rolledBack');
    assert.deepEqual(rolledBack.plan.state, { stableImage: v1, rolledBackImage: v2 });
    assert.equal(concludeRollout(plan, 'fail', false).outcome, 'failing');
    assert.equal(concludeRollout(plan, 'fail', false).plan.mode, 'canary');
    assert.equal(concludeRollout(plan, 'inconclusive', true).plan.mode, 'canary');
  });

  it('does not start a canary again for a rolled-back image, but does for the next one', () => {
    const state = { stableImage: v1, rolledBackImage: v2 };
    assert.equal(planRollout(spec(v2), state, {}, now).mode, 'rolledBack');
    const next = planRollout(spec('reco:3'), state, {}, now);
    assert.equal(next.mode, 'canary');
    assert.equal(next.state.rolledBackImage, undefined);
    assert.equal(planRollout(spec(v1), state, {}, now).mode, 'steady');
  });

  it('sizes the canary as ceil(total × weight / 100), at least one', () => {
    assert.equal(canaryReplicas(3, 20), 1);
    assert.equal(canaryReplicas(10, 25), 3);
    assert.equal(canaryReplicas(10, 20), 2);
    assert.equal(canaryReplicas(1, 1), 1);
    assert.equal(canaryReplicas(10, 0), 0);
    assert.equal(replicaWeight(1, 3), 25);
    assert.equal(replicaWeight(1, 2), 33);
    assert.equal(replicaWeight(0, 0), 0);
  });
});
