// The bench's pure parts: percentiles, ratios, counts and its arguments.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBenchArgs } from './bench-args.js';
import { countBy, percentile, ratio, summarize } from './stats.js';

test('percentiles are nearest-rank: a reported p99 is a time some request really took', () => {
  const samples = Array.from({ length: 100 }, (_, i) => i + 1);
  const [p50, p99, p100, p0] = [50, 99, 100, 0].map((p) => percentile(samples, p));
  assert.deepEqual({ p50, p99, p100, p0 }, { p50: 50, p99: 99, p100: 100, p0: 1 });
  assert.ok(Number.isNaN(percentile([], 50)));
  const input = [30, 10, 20, 40, 1000];
  assert.deepEqual(summarize(input), { p50: 30, p95: 1000, p99: 1000, max: 1000 });
  assert.deepEqual(input, [30, 10, 20, 40, 1000], 'the input is not sorted in place');
});

test('a ratio of a missing or zero figure is NaN, not 0 or Infinity; counts come most first', () => {
  assert.equal(ratio(3, 2), 1.5);
  assert.ok(Number.isNaN(ratio(3, 0)) && Number.isNaN(ratio(Number.NaN, 2)));
  assert.equal(countBy(['a', 'b', 'b'], String), 'b 2, a 1');
});

test('arguments: a subset of scenarios, burst sizes (50 and 200, or 50 when quick), the profilers; anything else is refused', () => {
  const quick = { scenarios: [1, 7], quick: true, bursts: [50], profile: false, heapSnapshot: false };
  assert.deepEqual(parseBenchArgs(['--scenarios=7,1', '--quick']), quick);
  assert.deepEqual(parseBenchArgs([]).bursts, [50, 200]);
  assert.deepEqual(parseBenchArgs(['--bursts=1000,50,200']).bursts, [50, 200, 1000]);
  const profiled = { ...parseBenchArgs([]), profile: true, heapSnapshot: true, out: '/tmp/b' };
  assert.deepEqual(parseBenchArgs(['--profile', '--heap-snapshot', '--out=/tmp/b']), profiled);
  assert.throws(() => parseBenchArgs(['--scenarios=10']), /--scenarios/);
  assert.throws(() => parseBenchArgs(['--bursts=0']), /--bursts/);
  assert.throws(() => parseBenchArgs(['--fast']), /Unknown option '--fast'/);
});
