// The bench's record of a process's garbage-collector pauses: real pauses of this process, kept
// with the time they began, so another process's window can pick its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GcPauseRecorder, summarizeGcPauses } from '../bench/gc-pauses.js';

test('pauses of this process are recorded while it allocates, with when they began, as soon as it stops', async () => {
  const recorder = new GcPauseRecorder();
  const from = Date.now();
  let kept: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    kept.push({ i, text: `object ${i}` });
    if (kept.length > 10_000) kept = [];
  }
  const to = Date.now();
  const pauses = await recorder.stop();
  assert.ok(pauses.length > 0, 'allocating 2 million objects collects garbage at least once');
  for (const [at, ms] of pauses) {
    assert.ok(at >= from - 5 && at <= to + 5, `a pause began at ${at}, outside ${from}–${to}`);
    assert.ok(ms >= 0);
  }
  const summary = summarizeGcPauses(pauses, from - 5, to + 5);
  assert.equal(summary.count, pauses.length);
  assert.equal(summary.longestMs, Math.max(...pauses.map(([, ms]) => ms)));
});

test('only the pauses that began inside the window count', () => {
  const pauses: [number, number][] = [[1000, 2], [1500, 8], [2500, 4]];
  assert.deepEqual(summarizeGcPauses(pauses, 1200, 2000), { count: 1, totalMs: 8, longestMs: 8 });
  assert.deepEqual(summarizeGcPauses(pauses, 3000, 4000), { count: 0, totalMs: 0, longestMs: 0 });
});
