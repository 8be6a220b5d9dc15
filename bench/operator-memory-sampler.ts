// Asks the operator process for its memory ("memory" on its stdin, operator-entry.ts) every
// `intervalMs` and keeps the sample with the highest RSS: the breakdown beside the peak.
import type { JsonLineChild } from './child-process.js';
import type { OperatorMemorySample } from './operator-memory.js';

/** One sample, asked for now. */
export async function sampleOperatorMemory(operator: JsonLineChild, timeoutMs = 30_000): Promise<OperatorMemorySample> {
  operator.send('memory');
  const answer = await operator.nextJson<{ benchMemory: OperatorMemorySample }>(timeoutMs, (v) => v?.benchMemory !== undefined);
  return answer.benchMemory;
}

export class OperatorMemorySampler {
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private highest: OperatorMemorySample | undefined;
  private samples = 0;

  constructor(private readonly operator: JsonLineChild, private readonly intervalMs = 2000) {}

  start(): void {
    const take = () => {
      if (this.inFlight || this.operator.hasExited()) return; // one question at a time
      this.inFlight = sampleOperatorMemory(this.operator)
        .then((s) => {
          this.samples++;
          if (!this.highest || s.rss > this.highest.rss) this.highest = s;
        })
        .catch(() => {}) // a busy or exiting operator: the next tick asks again
        .finally(() => (this.inFlight = undefined));
    };
    take();
    this.timer = setInterval(take, this.intervalMs);
  }

  /** Stops asking; the sample with the highest RSS (undefined if none came back). */
  async stop(): Promise<{ highest: OperatorMemorySample | undefined; samples: number }> {
    clearInterval(this.timer);
    await this.inFlight;
    return { highest: this.highest, samples: this.samples };
  }
}
