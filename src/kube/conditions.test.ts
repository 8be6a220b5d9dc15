import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findCondition, formatTime, isConditionTrue, removeCondition, setCondition, type Condition } from './conditions.js';

const t0 = new Date('2026-01-01T10:00:00.123Z');
const t1 = new Date('2026-01-01T10:05:00.000Z');
const t2 = new Date('2026-01-01T10:09:00.000Z');

describe('conditions', () => {
  it('a message keeps no terminal controls (kubectl describe prints it as it is)', () => {
    const [condition] = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'ConfigInvalid', message: 'bad key "\u001b]52;c;cHduZWQ=\u0007"' },
      t0,
    );
    assert.equal(condition!.message, 'bad key "]52;c;cHduZWQ="');
  });

  it('a new condition gets the transition time now, in whole seconds', () => {
    const list = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Deploying', message: 'waiting', observedGeneration: 1 },
      t0,
    );
    assert.deepEqual(list, [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Deploying',
        message: 'waiting',
        observedGeneration: 1,
        lastTransitionTime: '2026-01-01T10:00:00Z',
      },
    ]);
  });

  it('same status with a new reason, message or generation keeps lastTransitionTime', () => {
    const a = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Deploying', message: 'waiting', observedGeneration: 1 },
      t0,
    );
    const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'DatabaseNotReady', message: 'db 1/3', observedGeneration: 2 }, t1);
    assert.equal(b[0]!.lastTransitionTime, '2026-01-01T10:00:00Z');
    assert.equal(b[0]!.reason, 'DatabaseNotReady');
    assert.equal(b[0]!.message, 'db 1/3');
    assert.equal(b[0]!.observedGeneration, 2);
  });

  it('a status change moves lastTransitionTime; setting it again unchanged yields an equal array', () => {
    const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Deploying', message: '' }, t0);
    const b = setCondition(a, { type: 'Ready', status: 'True', reason: 'Ready', message: '' }, t1);
    assert.equal(b[0]!.lastTransitionTime, '2026-01-01T10:05:00Z');
    const c = setCondition(b, { type: 'Ready', status: 'True', reason: 'Ready', message: '' }, t2);
    assert.deepEqual(c, b, 'nothing changed, so a status patch would write nothing');
    const d = setCondition(c, { type: 'Ready', status: 'Unknown', reason: 'Lost', message: '' }, t2);
    assert.equal(d[0]!.lastTransitionTime, '2026-01-01T10:09:00Z');
  });

  it('keeps other conditions and their order, and does not mutate its input', () => {
    const a: Condition[] = [
      { type: 'Ready', status: 'False', reason: 'A', message: '', lastTransitionTime: 'x' },
      { type: 'Degraded', status: 'False', reason: 'B', message: '', lastTransitionTime: 'y' },
    ];
    const frozen = structuredClone(a);
    const b = setCondition(a, { type: 'Ready', status: 'True', reason: 'C', message: '' }, t1);
    assert.deepEqual(a, frozen);
    assert.deepEqual(
      b.map((c) => c.type),
      ['Ready', 'Degraded'],
    );
    const c = setCondition(b, { type: 'Progressing', status: 'True', reason: 'D', message: '' }, t1);
    assert.deepEqual(
      c.map((x) => x.type),
      ['Ready', 'Degraded', 'Progressing'],
    );
    assert.deepEqual(
      removeCondition(c, 'Degraded').map((x) => x.type),
      ['Ready', 'Progressing'],
    );
    assert.equal(findCondition(c, 'Degraded')?.reason, 'B');
    assert.equal(isConditionTrue(c, 'Ready'), true);
    assert.equal(isConditionTrue(c, 'Degraded'), false);
    assert.equal(isConditionTrue(c, 'Missing'), false);
  });

  it('rejects a reason that is not CamelCase and truncates huge messages', () => {
    assert.throws(() => setCondition([], { type: 'Ready', status: 'True', reason: 'not ok', message: '' }, t0), /CamelCase/);
    const long = setCondition([], { type: 'Ready', status: 'True', reason: 'Ok', message: 'x'.repeat(40_000) }, t0);
    assert.equal(long[0]!.message.length, 32_768);
  });

  it('formats metav1.Time without fractions', () => {
    assert.equal(formatTime(t0), '2026-01-01T10:00:00Z');
  });
});
