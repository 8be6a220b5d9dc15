import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocateSlots, DurationError, effectiveTtl, expiresAt, parseDuration, ttlProblem } from './budgets.js';

test('Go-style durations: units, sums and fractions', () => {
  assert.equal(parseDuration('72h'), 72 * 3_600_000);
  assert.equal(parseDuration('90m'), 90 * 60_000);
  assert.equal(parseDuration('1h30m'), 90 * 60_000);
  assert.equal(parseDuration('1.5h'), 90 * 60_000);
  assert.equal(parseDuration('2h45m30s'), (2 * 3600 + 45 * 60 + 30) * 1000);
  assert.equal(parseDuration('1500ms'), 1500);
  assert.equal(parseDuration('2500us'), 2, 'sub-millisecond parts are truncated');
  assert.equal(parseDuration('999999ns'), 0);
  assert.equal(parseDuration('0.1s'), 100);
});

test('anything the CRD pattern refuses is refused, with a message saying what is expected', () => {
  for (const bad of ['', '72', 'h', '1d', '-1h', '+1h', '1.h', '.5h', '1 h', '1H', '1µs', '72h ']) {
    assert.throws(() => parseDuration(bad), DurationError, bad);
  }
  assert.throws(() => parseDuration('3000000h'), /maximum/);
});

test('a TTL must be at least one minute (the CRD CEL rule)', () => {
  assert.equal(ttlProblem('1m'), undefined);
  assert.equal(ttlProblem('60s'), undefined);
  assert.equal(ttlProblem('59s'), 'must be at least 1m');
  assert.match(ttlProblem('3 days')!, /invalid duration/);
});

test('expiry is the last deployment plus the TTL', () => {
  assert.equal(expiresAt('2026-01-01T00:00:00Z', '72h').toISOString(), '2026-01-04T00:00:00.000Z');
  assert.equal(expiresAt(new Date('2026-01-01T23:30:00Z'), '90m').toISOString(), '2026-01-02T01:00:00.000Z');
  assert.throws(() => expiresAt('yesterday', '1h'), RangeError);
});

test("the TTL: spec.ttl, else the repository's, else the policy's default; the policy's maxTtl caps the last two", () => {
  const policy = { ttl: '72h', maxTtl: null };
  assert.deepEqual(effectiveTtl(undefined, undefined, policy), { ttl: '72h', source: 'policy' });
  assert.deepEqual(effectiveTtl(undefined, '2m', policy), { ttl: '2m', source: 'repository' });
  assert.deepEqual(effectiveTtl(undefined, '240h', policy), { ttl: '240h', source: 'repository' });
  const capped = { ttl: '72h', maxTtl: '96h' };
  assert.deepEqual(effectiveTtl(undefined, '240h', capped), { ttl: '96h', source: 'policy-cap' });
  assert.deepEqual(effectiveTtl(undefined, '90m', capped), { ttl: '90m', source: 'repository' });
  assert.deepEqual(effectiveTtl(undefined, undefined, { ttl: '72h', maxTtl: '1h' }), { ttl: '1h', source: 'policy-cap' });
  assert.deepEqual(effectiveTtl('500h', '2m', capped), { ttl: '500h', source: 'spec' }, 'set by hand on the object: a person decided');
});

test('cap: slot holders keep their slots, free slots go to the lowest waiting PR numbers', () => {
  const envs = [
    { number: 12, holdsSlot: false },
    { number: 3, holdsSlot: true },
    { number: 9, holdsSlot: false },
    { number: 20, holdsSlot: true },
    { number: 5, holdsSlot: false },
  ];
  assert.deepEqual(allocateSlots(envs, 3), { deploy: [3, 5, 20], queued: [9, 12] });
  assert.deepEqual(allocateSlots(envs, 2), { deploy: [3, 20], queued: [5, 9, 12] });
  assert.deepEqual(allocateSlots(envs, null), { deploy: [3, 5, 9, 12, 20], queued: [] });
});

test('lowering the cap below the running count tears nothing down; newcomers wait', () => {
  const envs = [
    { number: 1, holdsSlot: true },
    { number: 2, holdsSlot: true },
    { number: 3, holdsSlot: false },
  ];
  assert.deepEqual(allocateSlots(envs, 1), { deploy: [1, 2], queued: [3] });
});

test('when a slot frees up, the queue head gets it', () => {
  // PR 3 closed: its environment is gone from the list.
  const envs = [
    { number: 1, holdsSlot: true },
    { number: 7, holdsSlot: false },
    { number: 4, holdsSlot: false },
  ];
  assert.deepEqual(allocateSlots(envs, 2), { deploy: [1, 4], queued: [7] });
});
