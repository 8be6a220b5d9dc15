import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AlgorithmStatus } from '../../constructs/index.js';
import type { KubeObject } from '../kube/index.js';
import { lastWrittenBy, statusWait, type StatusPace } from './algorithm-status-pacing.js';

const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const t0 = Date.parse('2026-03-01T10:00:00Z');
const progressing: AlgorithmStatus = { phase: 'Progressing', stableImage: 'reco:1', readyReplicas: 0 };
const running: AlgorithmStatus = { phase: 'Running', stableImage: 'reco:1', readyReplicas: 2, lastReconciled: at(t0 - 60_000) };

const pace = (over: Partial<StatusPace>): StatusPace => ({
  previous: {},
  next: progressing,
  applied: false,
  deploymentWritten: at(t0),
  now: t0 + 3000,
  intervalMs: 10_000,
  ...over,
});

describe('when an Algorithm status may wait', () => {
  it('a first rollout waits the interval since its Deployment was written, or a whole one when applied now', () => {
    assert.equal(statusWait(pace({})), 8000, 'the Deployment written within the second t0 names: 11 s from t0');
    assert.equal(statusWait(pace({ next: { phase: 'Pending', stableImage: 'reco:1' }, applied: true })), 10_000);
    assert.equal(statusWait(pace({ now: t0 + 11_000 })), 0, 'still rolling out after the interval: Progressing goes out');
  });

  it('progress after a written Progressing waits the interval since that write', () => {
    const previous = { ...progressing, lastReconciled: at(t0 + 20_000) };
    const next = { ...progressing, readyReplicas: 1 };
    assert.equal(statusWait(pace({ previous, next, now: t0 + 25_000 })), 6000);
  });

  it('a serving Algorithm going back to Progressing waits too (a new spec applied, a blip)', () => {
    assert.equal(statusWait(pace({ previous: running, applied: true })), 10_000);
  });

  it('never waits with a decision: the rollout state changing, a phase a user acts on, or a way out of one', () => {
    const rolling = { ...progressing, stableImage: 'reco:2' };
    assert.equal(statusWait(pace({ previous: running, next: rolling, applied: true })), 0, 'a new stable image');
    assert.equal(statusWait(pace({ next: { ...progressing, canaryImage: 'reco:2' } })), 0, 'a canary');
    for (const phase of ['Running', 'Failed', 'Degraded', 'Canary', 'RolledBack', 'Inconclusive'] as const) {
      assert.equal(statusWait(pace({ next: { ...progressing, phase } })), 0, `next ${phase}`);
    }
    for (const phase of ['Failed', 'Degraded', 'Canary', 'RolledBack', 'Inconclusive'] as const) {
      assert.equal(statusWait(pace({ previous: { ...progressing, phase } })), 0, `out of ${phase}`);
    }
    const analysed = { ...progressing, lastAnalysis: { result: 'Success' as const, time: at(t0) } };
    assert.equal(statusWait(pace({ previous: progressing, next: analysed })), 0, 'an analysis recorded');
  });

  it('an interval of 0 writes at once', () => {
    assert.equal(statusWait(pace({ applied: true, intervalMs: 0 })), 0);
  });
});

describe('when the operator last wrote an object', () => {
  const deployment = (managedFields: NonNullable<KubeObject['metadata']['managedFields']>): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'reco', creationTimestamp: at(t0), managedFields },
  });

  it('its own latest write of the object, not of its status or by others; else its creation', () => {
    const object = deployment([
      { manager: 'preview-operator', operation: 'Apply', time: at(t0 + 5000) },
      { manager: 'preview-operator', operation: 'Apply', time: at(t0 + 9000), subresource: 'status' },
      { manager: 'kube-controller-manager', operation: 'Update', time: at(t0 + 7000) },
    ]);
    assert.equal(lastWrittenBy(object, 'preview-operator'), at(t0 + 5000));
    assert.equal(lastWrittenBy(deployment([]), 'preview-operator'), at(t0));
    assert.equal(lastWrittenBy(undefined, 'preview-operator'), undefined);
  });
});
