// The bench's memory diagnostics of the operator: the RSS breakdown, the heap snapshot summary
// (on a real snapshot of this process) and the JSON-line conversation with a child process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import v8 from 'node:v8';
import { JsonLines } from '../bench/child-process.js';
import { HeapSnapshotSummarizer, heapSnapshotMarkdown, summarizeHeapSnapshotFile } from '../bench/heap-snapshot-summary.js';
import { memoryBreakdown, memoryFigures, takeMemorySample } from '../bench/operator-memory.js';

const MB = 1024 * 1024;

test('the RSS breaks down into heap, external and the rest, which never goes below zero', () => {
  const sample = {
    at: 0, rss: 300 * MB, heapTotal: 180 * MB, heapUsed: 150 * MB, external: 40 * MB, arrayBuffers: 30 * MB,
    heapSpaces: [{ name: 'old_space', size: 150 * MB, used: 130 * MB }, { name: 'new_space', size: 0, used: 0 }],
  };
  const m = memoryBreakdown(sample);
  assert.equal(m.restMb, 80);
  assert.equal(m.heapUsedMb, 150);
  assert.equal(m.spaces, 'old_space 130.0 of 150.0 MB'); // empty spaces left out
  assert.equal(memoryBreakdown({ ...sample, rss: 200 * MB }).restMb, 0);
  const figures = memoryFigures(4, sample);
  assert.equal(figures.length, 5);
  assert.ok(figures.every((f) => f.unit === 'MB' && f.scenario === 4));
  assert.deepEqual(memoryFigures(4, undefined), []);

  // The live sample is this process's own: consistent with process.memoryUsage().
  const live = takeMemorySample();
  assert.ok(live.rss > live.heapUsed && live.heapTotal >= live.heapUsed);
  assert.ok(live.heapSpaces.some((s) => s.name === 'old_space'));
  assert.ok(live.heapSpaces.every((s, i) => i === 0 || live.heapSpaces[i - 1]!.size >= s.size));
});

class BenchHeapMarker {
  constructor(readonly n: number, readonly label: string) {}
}

test('a real heap snapshot is summarised by constructor, counting every object of a class', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-heap-'));
  const markers = Array.from({ length: 5000 }, (_, i) => new BenchHeapMarker(i, `m${i}`));
  const big = ['q', 'r', 's'].map((c) => c.repeat(MB)).join(''); // join makes one flat 3 MB string on the heap
  try {
    const file = v8.writeHeapSnapshot(path.join(dir, 'test.heapsnapshot'));
    const summary = await summarizeHeapSnapshotFile(file);
    const marker = summary.constructors.find((c) => c.name === 'BenchHeapMarker');
    assert.equal(marker?.count, 5000);
    assert.ok(marker.shallowBytes >= 5000 * 16, `${marker.shallowBytes} bytes`);
    assert.ok(summary.constructors.some((c) => c.name === '(string)' && c.count >= 5000));
    // Sorted by size; the total is the heap after the snapshot's GC (the markers are alive).
    assert.ok(summary.constructors.every((c, i) => i === 0 || summary.constructors[i - 1]!.shallowBytes >= c.shallowBytes));
    assert.ok(summary.shallowBytes > 1 * MB && summary.shallowBytes < process.memoryUsage().heapTotal * 2);
    assert.match(heapSnapshotMarkdown(summary), /\| BenchHeapMarker \| 5000 \|/);
    // The big string is among the largest single objects, named by its text.
    const string = summary.largest.find((l) => l.type === 'string' && l.name.startsWith('qqqq'));
    assert.ok(string && string.shallowBytes >= 3 * MB, JSON.stringify(summary.largest.map((l) => [l.type, l.name.slice(0, 20), l.shallowBytes])));
    assert.ok(summary.largest.every((l, i) => i === 0 || summary.largest[i - 1]!.shallowBytes >= l.shallowBytes));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(markers.length + big.length, 5000 + 3 * MB); // both alive until the snapshot is read
  assert.throws(() => new HeapSnapshotSummarizer().line('{"nodes":[]}'), /not a V8 heap snapshot/);
});

test('JSON lines go to the oldest wait that accepts them; others are kept for later waits', async () => {
  const lines = new JsonLines(3);
  const timeout = () => new Error('timeout');
  const memory = lines.next<{ benchMemory: number }>(1000, (v) => v?.benchMemory !== undefined, timeout);
  const profile = lines.next<{ benchProfile: string }>(1000, (v) => v?.benchProfile !== undefined, timeout);
  lines.push('{"level":30,"msg":"a log line"}');
  lines.push('not json');
  lines.push('{"benchProfile":"written"}');
  lines.push('{"benchMemory":1}');
  assert.deepEqual(await profile, { benchProfile: 'written' });
  assert.deepEqual(await memory, { benchMemory: 1 });
  // The log line waited in the kept values; only the most recent 3 are kept.
  for (let i = 0; i < 4; i++) lines.push(`{"n":${i}}`);
  assert.deepEqual(await lines.next(10, (v) => v?.level !== undefined || v?.n !== undefined, timeout), { n: 1 });
  await assert.rejects(lines.next(10, (v) => v?.benchMemory !== undefined, timeout), /timeout/);
  const pending = lines.next(1000, (v) => v?.never !== undefined, timeout);
  lines.close(() => new Error('exited'));
  await assert.rejects(pending, /exited/);
  assert.deepEqual(await lines.next(10, (v) => v?.n === 3, timeout), { n: 3 }, 'kept values outlive the child');
  await assert.rejects(lines.next(10, (v) => v?.n === 99, timeout), /exited/);
});
