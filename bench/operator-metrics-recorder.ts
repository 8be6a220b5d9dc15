// Scrapes the operator's /metrics at the start and the end of a stretch of the bench and, if
// asked, every `tickMs` in between (queue depths, event-loop delay); controller-activity.ts
// turns that into figures. Scrapes cost the operator a little CPU: their count and time are
// reported with the figures.
import { operatorActivity, tickOf, type ActivityTick, type OperatorActivity } from './controller-activity.js';
import { parsePrometheusText, type PromSample } from './prometheus-text.js';

export interface RecordedActivity {
  activity: OperatorActivity;
  scrapes: number;
  failedScrapes: number;
  /** Mean time of one scrape, seen from the bench. */
  scrapeMeanMs: number;
}

export class OperatorMetricsRecorder {
  private readonly ticks: ActivityTick[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<void> | undefined;
  private scrapes = 0;
  private failedScrapes = 0;
  private scrapeMs = 0;

  private constructor(private readonly url: string, private readonly first: PromSample[], private readonly startedAt: number) {}

  /** Takes the start scrape (rejects if the operator does not answer) and starts ticking. */
  static async start(url: string, options: { tickMs?: number } = {}): Promise<OperatorMetricsRecorder> {
    const startedAt = performance.now();
    const recorder = new OperatorMetricsRecorder(url, [], startedAt);
    recorder.first.push(...(await recorder.scrape()));
    if (options.tickMs) {
      recorder.timer = setInterval(() => {
        if (recorder.inFlight) return; // a slow operator: skip a tick rather than pile up scrapes
        const at = (performance.now() - startedAt) / 1000;
        recorder.inFlight = recorder.scrape()
          .then((samples) => void recorder.ticks.push(tickOf(at, samples)))
          .catch(() => void recorder.failedScrapes++)
          .finally(() => (recorder.inFlight = undefined));
      }, options.tickMs);
    }
    return recorder;
  }

  /** Stops ticking, without the end scrape (safe to call more than once). */
  cancel(): void {
    clearInterval(this.timer);
  }

  /** Stops ticking and takes the end scrape. */
  async stop(): Promise<RecordedActivity> {
    this.cancel();
    await this.inFlight;
    const seconds = (performance.now() - this.startedAt) / 1000;
    const end = await this.scrape();
    return {
      activity: operatorActivity({ start: this.first, end, seconds, ticks: this.ticks }),
      scrapes: this.scrapes,
      failedScrapes: this.failedScrapes,
      scrapeMeanMs: this.scrapes > 0 ? this.scrapeMs / this.scrapes : Number.NaN,
    };
  }

  private async scrape(): Promise<PromSample[]> {
    const t = performance.now();
    const res = await fetch(this.url, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`GET ${this.url} answered ${res.status}`);
    const text = await res.text();
    this.scrapes++;
    this.scrapeMs += performance.now() - t;
    return parsePrometheusText(text);
  }
}

/** How the figures were taken, and what taking them cost. */
export function scrapeNote(r: RecordedActivity): string {
  return `The operator's /metrics was scraped ${r.scrapes} times over ${r.activity.seconds.toFixed(0)} s (start, every second for the queue depths, end; ${r.scrapeMeanMs.toFixed(1)} ms each on average as the bench sees it, the operator's event-loop delay included${r.failedScrapes ? `, ${r.failedScrapes} failed` : ''}). p95 of a reconcile is interpolated in the histogram's buckets (0.005 … 60 s), as histogram_quantile does; mean wait in a queue is ∫depth·dt ÷ reconciles (Little's law).`;
}
