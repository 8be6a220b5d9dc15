import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProgressPacer } from './progress-pacer.js';

test('the first progress report of a SHA goes out at once; the next waits for the rest of the interval', () => {
  const pacer = new ProgressPacer(10_000);
  assert.equal(pacer.wait('pr-1', 'a', 1000), 0);
  pacer.reported('pr-1', 'a', 1000);
  assert.equal(pacer.wait('pr-1', 'a', 4000), 7000);
  assert.equal(pacer.wait('pr-1', 'a', 11_000), 0);
  assert.equal(pacer.wait('pr-2', 'a', 4000), 0, 'environments are paced apart');
});

test('a new head SHA, or leaving the deploying state, reports at once again', () => {
  const pacer = new ProgressPacer(10_000);
  pacer.reported('pr-1', 'a', 1000);
  assert.equal(pacer.wait('pr-1', 'b', 2000), 0);
  pacer.forget('pr-1');
  assert.equal(pacer.wait('pr-1', 'a', 2000), 0);
});

test('an interval of 0 reports every change', () => {
  const pacer = new ProgressPacer(0);
  pacer.reported('pr-1', 'a', 1000);
  assert.equal(pacer.wait('pr-1', 'a', 1000), 0);
});
