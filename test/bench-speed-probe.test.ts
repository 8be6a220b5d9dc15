// The bench's speed probe: its figure is how long a core took for the fixed work, not how long
// the probe waited for a core — so a probe sharing its core with a busy process reports the same
// time though the clock says twice as long; and the comparison picks each window's own samples.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compareSpeed, speedNote, type SpeedSample } from '../bench/speed-probe-recorder.js';

const probeScript = fileURLToPath(new URL('../bench/speed-probe.ts', import.meta.url));

/** `count` samples of the probe pinned to CPU 0, with a busy loop pinned there beside it or not. */
async function probeSamples(count: number, sharedCore: boolean): Promise<SpeedSample[]> {
  const spinner = sharedCore ? spawn('taskset', ['-c', '0', process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' }) : undefined;
  const probe = spawn('taskset', ['-c', '0', process.execPath, '--import', 'tsx', probeScript, '100', '2000'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const samples: SpeedSample[] = [];
  try {
    for await (const line of createInterface({ input: probe.stdout! })) {
      const value = JSON.parse(line) as { speedProbe: SpeedSample | 'started' };
      if (value.speedProbe !== 'started') samples.push(value.speedProbe);
      if (samples.length === count) break;
    }
  } finally {
    probe.kill();
    spinner?.kill();
  }
  assert.equal(samples.length, count, `the probe pinned to CPU 0 wrote ${samples.length} of ${count} samples`);
  return samples;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

test('a probe that shares its core with a busy process reports the CPU time of its work, not the longer wait', { timeout: 90_000 }, async () => {
  // Alone before and after: the host may change the core's speed in between (docs/benchmarks.md).
  const before = await probeSamples(12, false);
  const shared = await probeSamples(12, true);
  const after = await probeSamples(12, false);
  const wallShared = median(shared.map((s) => s.wallMs));
  const cpuShared = median(shared.map((s) => s.cpuMs));
  const cpuAlone = [median(before.map((s) => s.cpuMs)), median(after.map((s) => s.cpuMs))];
  assert.ok(wallShared > 1.4 * cpuShared, `sharing the core, the clock shows the wait: ${wallShared.toFixed(1)} ms by the clock, ${cpuShared.toFixed(1)} ms of CPU`);
  assert.ok(cpuAlone.some((alone) => cpuShared < 1.4 * alone && cpuShared > alone / 1.4), `the CPU time stays the work's: ${cpuShared.toFixed(1)} ms shared, ${cpuAlone.map((ms) => ms.toFixed(1)).join(' and ')} ms alone before and after`);
  for (const s of [...before, ...shared, ...after]) assert.ok(s.cpuMs > 0 && Number.isFinite(s.at));
});

test('the comparison takes the median of each window and their ratio, core by core', () => {
  const samples: SpeedSample[] = [
    { at: 1000, cpuMs: 10, wallMs: 10 }, { at: 1500, cpuMs: 12, wallMs: 12 }, { at: 2000, cpuMs: 11, wallMs: 11 },
    { at: 5000, cpuMs: 20, wallMs: 40 }, { at: 5500, cpuMs: 24, wallMs: 50 }, { at: 6000, cpuMs: 22, wallMs: 30 }, { at: 9000, cpuMs: 99, wallMs: 99 },
  ];
  const c = compareSpeed(samples, { from: 1000, to: 2000 }, { from: 5000, to: 6000 });
  assert.equal(c.quietSamples, 3);
  assert.equal(c.duringSamples, 3);
  assert.equal(c.quietMs, 11);
  assert.equal(c.duringMs, 22);
  assert.equal(c.slowdown, 2);
  const other = compareSpeed(samples, { from: 1000, to: 1500 }, { from: 1000, to: 2000 });
  assert.match(speedNote([c, other], 'in the burst'), /core 0 median 22\.0 ms of CPU .* against 11\.0 ms .*×2\.00; core 1 median 11\.0 ms .*against 10\.0 ms .*×1\.10\.$/);
});

test('without samples in a window the comparison says so instead of a ratio', () => {
  const c = compareSpeed([{ at: 1000, cpuMs: 10, wallMs: 10 }], { from: 0, to: 500 }, { from: 900, to: 1100 });
  assert.ok(Number.isNaN(c.slowdown));
  assert.match(speedNote([c], 'in the burst'), /core 0 no samples in the quiet seconds before/);
});
