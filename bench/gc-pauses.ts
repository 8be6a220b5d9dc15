// The garbage collector's pauses of this process, as Node reports them ('gc' performance
// entries): each stops the thread, so in a closed loop every request in flight waits through it.
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** One pause: when it began (ms since the epoch, comparable across processes) and how long it took. */
export type GcPause = [startedAtEpochMs: number, ms: number];

export interface GcPauseSummary {
  count: number;
  totalMs: number;
  longestMs: number;
}

/**
 * Records every pause from construction until `stop`; `take` hands over those so far. Node
 * queues a pause's entry on the event loop's next turn, and calls observers later still.
 */
export class GcPauseRecorder {
  private pauses: GcPause[] = [];
  private readonly observer = new PerformanceObserver((list) => this.keep(list.getEntries()));

  constructor() {
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** The pauses recorded since the last `take`, oldest first (those of the current turn not yet). */
  take(): GcPause[] {
    this.keep(this.observer.takeRecords());
    const taken = this.pauses;
    this.pauses = [];
    return taken;
  }

  /** Stops recording, once the pauses until now have been queued; those not taken yet. */
  async stop(): Promise<GcPause[]> {
    await new Promise((resolve) => setImmediate(resolve));
    const taken = this.take();
    this.observer.disconnect();
    return taken;
  }

  private keep(entries: readonly PerformanceEntry[]): void {
    for (const entry of entries) this.pauses.push([performance.timeOrigin + entry.startTime, entry.duration]);
  }
}

/** The pauses that began between `fromEpochMs` and `toEpochMs`, summarised. */
export function summarizeGcPauses(pauses: readonly GcPause[], fromEpochMs: number, toEpochMs: number): GcPauseSummary {
  const within = pauses.filter(([at]) => at >= fromEpochMs && at <= toEpochMs).map(([, ms]) => ms);
  return { count: within.length, totalMs: within.reduce((a, b) => a + b, 0), longestMs: within.length ? Math.max(...within) : 0 };
}
