// `--heap-snapshot`: asks the operator process to write a V8 heap snapshot into the results
// folder ("heap-snapshot <file>" on its stdin, operator-entry.ts) and summarises it by
// constructor (<name>-heap.md). The snapshot opens in Chrome DevTools (Memory tab → Load).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { JsonLineChild } from './child-process.js';
import { heapSnapshotHeadline, heapSnapshotMarkdown, summarizeHeapSnapshotFile } from './heap-snapshot-summary.js';

/** Writes `<name>.heapsnapshot` (and `<name>-heap.md`) under `outDir`; returns a note for the results. */
export async function heapSnapshotOf(operator: JsonLineChild, outDir: string, name: string, log: (line: string) => void): Promise<string> {
  const file = path.join(outDir, `${name}.heapsnapshot`);
  log(`heap snapshot of the operator → ${file}`);
  try {
    operator.send(`heap-snapshot ${file}`);
    const { benchHeapSnapshot: written } = await operator.nextJson<{ benchHeapSnapshot: { file: string; bytes: number; ms: number } }>(600_000, (v) => v?.benchHeapSnapshot !== undefined);
    const summaryStarted = performance.now();
    const summary = await summarizeHeapSnapshotFile(written.file);
    writeFileSync(path.join(outDir, `${name}-heap.md`), heapSnapshotMarkdown(summary));
    return `Heap snapshot at the end of the burst (${name}.heapsnapshot, ${(written.bytes / (1024 * 1024)).toFixed(0)} MB, written by the operator in ${(written.ms / 1000).toFixed(1)} s, summarised in ${((performance.now() - summaryStarted) / 1000).toFixed(1)} s; ${name}-heap.md): ${(summary.shallowBytes / (1024 * 1024)).toFixed(1)} MB in ${summary.nodes} objects after the snapshot's full GC; largest by shallow size: ${heapSnapshotHeadline(summary)}.`;
  } catch (err) {
    return `The heap snapshot failed: ${(err as Error).message.split('\n')[0]}`;
  }
}
