import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setKstatusConditions } from './kstatus.js';

const now = new Date('2026-01-01T00:00:00Z');
const brief = (conditions: { type: string; status: string; reason: string; observedGeneration?: number }[]) =>
  conditions.map((c) => `${c.type}=${c.status} ${c.reason} @${c.observedGeneration}`);

describe('kstatus conditions', () => {
  it('current: neither Reconciling nor Stalled', () => {
    assert.deepEqual(brief(setKstatusConditions([], { state: 'current' }, 3, now)), [
      'Reconciling=False Reconciled @3',
      'Stalled=False Reconciled @3',
    ]);
  });

  it('progressing: Reconciling=True with the reason', () => {
    const conditions = setKstatusConditions([], { state: 'progressing', reason: 'RollingOut', message: '1 of 2 ready' }, 4, now);
    assert.deepEqual(brief(conditions), ['Reconciling=True RollingOut @4', 'Stalled=False Progressing @4']);
    assert.equal(conditions[0]!.message, '1 of 2 ready');
  });

  it('stalled: Stalled=True with the reason, keeping the other conditions', () => {
    const ready = { type: 'Ready', status: 'False' as const, reason: 'Failed', message: 'x', lastTransitionTime: '2025-01-01T00:00:00Z' };
    const conditions = setKstatusConditions([ready], { state: 'stalled', reason: 'ApplyFailed', message: 'refused' }, 5, now);
    assert.deepEqual(brief(conditions), ['Ready=False Failed @undefined', 'Reconciling=False Stalled @5', 'Stalled=True ApplyFailed @5']);
  });
});
