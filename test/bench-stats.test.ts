// The bench's pure parts: percentiles, ratios, argument parsing and /proc parsing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseBenchArgs } from '../bench/bench-args.js';
import { parseProcessUsage, parseSchedstat, scheduleBetween, threadSchedule } from '../bench/process-usage.js';
import { percentile, ratio, summarize } from '../bench/stats.js';

test('percentiles are nearest-rank: a reported p99 is a time some request really took', () => {
  const samples = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100
  assert.equal(percentile(samples, 50), 50);
  assert.equal(percentile(samples, 99), 99);
  assert.equal(percentile(samples, 100), 100);
  assert.equal(percentile(samples, 0), 1);
  assert.equal(percentile([7], 99), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
});

test('summarize sorts its input without changing it and reports the five box-plot numbers', () => {
  const input = [30, 10, 20, 40, 1000];
  const s = summarize(input);
  assert.deepEqual(input, [30, 10, 20, 40, 1000]);
  assert.deepEqual([s.min, s.p25, s.p50, s.p75, s.max, s.count], [10, 20, 30, 40, 1000, 5]);
  assert.equal(s.mean, 220);
  assert.equal(s.p99, 1000);
});

test('a ratio of a missing or zero figure is NaN, not 0 or Infinity', () => {
  assert.equal(ratio(3, 2), 1.5);
  assert.ok(Number.isNaN(ratio(3, 0)));
  assert.ok(Number.isNaN(ratio(Number.NaN, 2)));
});

test('--scenarios picks a subset, --quick, --check and --heap-snapshot switch on; anything else is refused', () => {
  assert.deepEqual(parseBenchArgs(['--scenarios=7,1', '--quick']), { scenarios: [1, 7], quick: true, check: false, profile: true, heapSnapshot: false });
  assert.deepEqual(parseBenchArgs([]).scenarios, [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(parseBenchArgs(['--check', '--no-profile']).profile, false);
  assert.equal(parseBenchArgs(['--heap-snapshot']).heapSnapshot, true);
  assert.throws(() => parseBenchArgs(['--scenarios=9']), /--scenarios/);
  assert.throws(() => parseBenchArgs(['--fast']), /unknown argument/);
});

test('peak RSS comes from VmHWM and CPU seconds from utime + stime, even with spaces in the command name', () => {
  const status = 'Name:\tnode\nVmHWM:\t  262144 kB\nVmRSS:\t  131072 kB\n';
  // pid (comm) state ppid ... field 14 utime = 250 ticks, field 15 stime = 50 ticks
  const stat = '4242 (node (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 11 0 1000 0 0';
  const usage = parseProcessUsage(status, stat);
  assert.equal(usage.peakRssMb, 256);
  assert.equal(usage.rssMb, 128);
  assert.equal(usage.cpuSeconds, 3);
});

test('a thread\'s time on a CPU and waiting for one come from its schedstat, in ms', () => {
  assert.deepEqual(parseSchedstat('1528835187 565943720 1192\n'), { onCpuMs: 1528.835187, waitingMs: 565.94372, slices: 1192 });
  assert.throws(() => parseSchedstat('1528835187\n'), /not a schedstat line/);
  assert.deepEqual(scheduleBetween({ onCpuMs: 10, waitingMs: 4, slices: 3 }, { onCpuMs: 25, waitingMs: 10, slices: 9 }), { onCpuMs: 15, waitingMs: 6, slices: 6 });
  // This process's own main thread: it has run, so its CPU time is positive.
  const own = threadSchedule(process.pid);
  if (own) assert.ok(own.onCpuMs > 0 && own.slices > 0, JSON.stringify(own));
  assert.equal(threadSchedule(2 ** 22 + 1), undefined, 'no such process');
});
