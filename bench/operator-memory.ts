// What the operator's resident memory is made of, as the process itself sees it: V8's heap
// (used and reserved, by space), memory outside the heap that V8 accounts for (Buffers and
// other ArrayBuffers), and the rest of the RSS — the node binary's code, thread stacks and
// native allocations (libuv, OpenSSL, zlib, ICU) — which only the difference reveals.
// operator-entry.ts takes the sample ("memory" on its stdin); the bench turns it into figures.
import v8 from 'node:v8';
import type { Figure } from './figures.js';

export interface HeapSpaceSample {
  name: string;
  /** Bytes reserved for the space. */
  size: number;
  /** Bytes of live and not yet collected objects in it. */
  used: number;
}

export interface OperatorMemorySample {
  /** Date.now() when taken. */
  at: number;
  /** process.memoryUsage(), bytes. `external` includes `arrayBuffers`. */
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** v8.getHeapSpaceStatistics(), largest first. */
  heapSpaces: HeapSpaceSample[];
}

/**
 * One sample of this process's memory: cheap, no GC and no heap walk. (Not
 * v8.getHeapCodeStatistics(), which walks the code objects: ~50 ms each time in a busy operator,
 * a tenth of its CPU when asked every 2 s. The heap snapshot shows code sizes instead.)
 */
export function takeMemorySample(): OperatorMemorySample {
  const usage = process.memoryUsage();
  return {
    at: Date.now(),
    rss: usage.rss,
    heapTotal: usage.heapTotal,
    heapUsed: usage.heapUsed,
    external: usage.external,
    arrayBuffers: usage.arrayBuffers,
    heapSpaces: v8.getHeapSpaceStatistics()
      .map((s) => ({ name: s.space_name, size: s.space_size, used: s.space_used_size }))
      .sort((a, b) => b.size - a.size),
  };
}

export interface MemoryBreakdown {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  /** Buffers, ArrayBuffers and other memory V8 is told about but does not hold in its heap. */
  externalMb: number;
  arrayBuffersMb: number;
  /** RSS − heap total − external: code of the binary, stacks, native allocations (never below 0). */
  restMb: number;
  /** E.g. "old_space 80.1 of 95.0 MB, large_object_space 20.3 of 20.3 MB, …" */
  spaces: string;
}

const mb = (bytes: number) => bytes / (1024 * 1024);

export function memoryBreakdown(sample: OperatorMemorySample): MemoryBreakdown {
  const spaces = sample.heapSpaces
    .filter((s) => s.size > 0)
    .map((s) => `${s.name} ${mb(s.used).toFixed(1)} of ${mb(s.size).toFixed(1)} MB`)
    .join(', ');
  return {
    rssMb: mb(sample.rss),
    heapUsedMb: mb(sample.heapUsed),
    heapTotalMb: mb(sample.heapTotal),
    externalMb: mb(sample.external),
    arrayBuffersMb: mb(sample.arrayBuffers),
    restMb: Math.max(0, mb(sample.rss - sample.heapTotal - sample.external)),
    spaces,
  };
}

/** The breakdown of the highest sampled RSS as figures (none when no sample came back). */
export function memoryFigures(scenario: number, sample: OperatorMemorySample | undefined): Figure[] {
  if (!sample) return [];
  const m = memoryBreakdown(sample);
  return [
    { scenario, name: 'operator RSS, highest of the memory samples (every 2 s)', value: m.rssMb, unit: 'MB' },
    { scenario, name: `… V8 heap used`, value: m.heapUsedMb, unit: 'MB' },
    { scenario, name: `… V8 heap total (reserved; includes code space)`, value: m.heapTotalMb, unit: 'MB' },
    { scenario, name: `… external (Buffers, ArrayBuffers: ${m.arrayBuffersMb.toFixed(1)} MB)`, value: m.externalMb, unit: 'MB' },
    { scenario, name: `… the rest: RSS − heap total − external (binary code, stacks, native)`, value: m.restMb, unit: 'MB' },
  ];
}

export function memoryNote(sample: OperatorMemorySample | undefined, samples: number): string {
  if (!sample) return `Memory breakdown: no answer to the ${samples === 0 ? '"memory" requests' : 'requests'} during the burst.`;
  const m = memoryBreakdown(sample);
  return `Memory breakdown (the highest RSS of ${samples} samples, every 2 s, from process.memoryUsage() and v8.getHeapSpaceStatistics() inside the operator): RSS ${m.rssMb.toFixed(1)} MB = V8 heap ${m.heapTotalMb.toFixed(1)} MB reserved (${m.heapUsedMb.toFixed(1)} MB used) + external ${m.externalMb.toFixed(1)} MB + the rest ${m.restMb.toFixed(1)} MB. Heap spaces (used of reserved): ${m.spaces}.`;
}
