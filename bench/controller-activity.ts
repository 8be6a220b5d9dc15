// Where a stretch of the operator's time went, from its own /metrics (src/server/metrics.ts):
// the difference between a scrape at the start and one at the end gives, per controller, the
// reconciles, their outcomes, errors and duration (mean, and p50/p95 from the histogram's
// buckets as Prometheus' histogram_quantile computes them); the scrapes in between give the
// work-queue depth over time — the peak, and ∫depth·dt, which by Little's law divided by the
// reconciles is the mean time a key waited for a worker. That says which queue a burst waited in.
import type { Figure } from './figures.js';
import type { PromSample } from './prometheus-text.js';

const metric = {
  reconciles: 'preview_operator_reconciles_total',
  errors: 'preview_operator_reconcile_errors_total',
  duration: 'preview_operator_reconcile_duration_seconds',
  queueDepth: 'preview_operator_queue_depth',
  toApplied: 'preview_operator_webhook_to_applied_seconds',
  toReady: 'preview_operator_webhook_to_ready_seconds',
  // The webhook's answer inside the operator: body read → answer decided.
  webhookAnswer: 'preview_operator_webhook_duration_seconds',
  // The webhook's write after the answer (EnvironmentWriter), where the operator has one.
  webhookWrite: 'preview_operator_webhook_write_seconds',
  webhookWritesPending: 'preview_operator_webhook_writes_pending',
  githubRequests: 'preview_operator_github_requests_total',
  gc: 'nodejs_gc_duration_seconds',
  lagMax: 'nodejs_eventloop_lag_max_seconds',
  lagP99: 'nodejs_eventloop_lag_p99_seconds',
} as const;

/** One sample taken between the two scrapes (every second or so). */
export interface ActivityTick {
  /** Seconds since the start scrape. */
  seconds: number;
  /** Keys waiting for a worker, by controller. */
  queueDepth: Record<string, number>;
  /** Event-loop delay since the previous scrape (prom-client resets its histogram at each scrape), seconds. */
  eventLoopLagMax: number;
  eventLoopLagP99: number;
  /** Accepted deliveries whose PreviewEnvironment write has not been made yet (NaN when not exported). */
  webhookWritesPending: number;
}

export interface ActivityWindow {
  start: readonly PromSample[];
  end: readonly PromSample[];
  /** Wall time between the two scrapes. */
  seconds: number;
  ticks: readonly ActivityTick[];
}

export interface Distribution {
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
}

export interface ControllerActivity {
  controller: string;
  reconciles: number;
  /** Reconciles by outcome (success, requeue, conflict, error). */
  outcomes: Record<string, number>;
  errors: number;
  duration: Distribution;
  /** Σ reconcile durations: worker-seconds spent reconciling. */
  busySeconds: number;
  /** NaN when no ticks were taken. */
  peakQueueDepth: number;
  peakQueueAtSeconds: number;
  /** ∫ queue depth dt over the ticks, key-seconds. */
  queueKeySeconds: number;
}

export interface OperatorActivity {
  seconds: number;
  controllers: ControllerActivity[];
  webhookToApplied: Distribution;
  webhookToReady: Distribution;
  /** Body read → answer decided, inside the operator (not the wait for its event loop before it). */
  webhookAnswer: Distribution;
  /** Accepted delivery → its PreviewEnvironment write made (count 0 when not exported). */
  webhookWrite: Distribution;
  /** Highest number of webhook writes waiting in any tick (NaN when not exported or no ticks). */
  peakWebhookWritesPending: number;
  /** GitHub responses by rate-limit resource. */
  githubRequests: Record<string, number>;
  gcSeconds: number;
  /** Largest event-loop delay seen in any tick, and the mean of the ticks' p99, ms (NaN without ticks). */
  eventLoopLagMaxMs: number;
  eventLoopLagP99MeanMs: number;
}

const sameLabels = (a: Record<string, string>, b: Record<string, string>) => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
};

/** Per series of `name` in `end`: its value minus the same series' value in `start` (absent there = 0). */
function increases(window: ActivityWindow, name: string): PromSample[] {
  return window.end.filter((s) => s.name === name).map((s) => {
    const before = window.start.find((b) => b.name === name && sameLabels(b.labels, s.labels));
    return { ...s, value: s.value - (before?.value ?? 0) };
  });
}

const matches = (labels: Record<string, string>, filter: Record<string, string>) => Object.entries(filter).every(([k, v]) => labels[k] === v);

const sum = (samples: readonly PromSample[]) => samples.reduce((t, s) => t + s.value, 0);

/**
 * The q-quantile (0..1) of a histogram given as cumulative bucket counts, as Prometheus'
 * histogram_quantile: linear interpolation inside the bucket holding the rank; a rank in the
 * +Inf bucket gives the highest finite bound. NaN for an empty histogram.
 */
export function histogramQuantile(q: number, buckets: ReadonlyArray<{ le: number; count: number }>): number {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total <= 0) return Number.NaN;
  const rank = q * total;
  for (let i = 0; i < sorted.length; i++) {
    const b = sorted[i]!;
    if (b.count < rank) continue;
    if (b.le === Number.POSITIVE_INFINITY) return sorted[i - 1]?.le ?? Number.NaN;
    const lower = i === 0 ? 0 : sorted[i - 1]!.le;
    const below = i === 0 ? 0 : sorted[i - 1]!.count;
    const inBucket = b.count - below;
    return inBucket === 0 ? b.le : lower + (b.le - lower) * ((rank - below) / inBucket);
  }
  return sorted.at(-1)!.le;
}

/** A histogram's increase over the window, restricted to series with `filter`'s labels. */
function distribution(window: ActivityWindow, name: string, filter: Record<string, string> = {}): Distribution {
  const buckets = new Map<number, number>();
  for (const s of increases(window, `${name}_bucket`)) {
    if (!matches(s.labels, filter)) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    buckets.set(le, (buckets.get(le) ?? 0) + s.value);
  }
  const list = [...buckets.entries()].map(([le, count]) => ({ le, count }));
  const count = sum(increases(window, `${name}_count`).filter((s) => matches(s.labels, filter)));
  const total = sum(increases(window, `${name}_sum`).filter((s) => matches(s.labels, filter)));
  return {
    count,
    meanMs: count > 0 ? (1000 * total) / count : Number.NaN,
    p50Ms: 1000 * histogramQuantile(0.5, list),
    p95Ms: 1000 * histogramQuantile(0.95, list),
  };
}

export function operatorActivity(window: ActivityWindow): OperatorActivity {
  const names = new Set<string>();
  for (const s of [...window.end, ...window.start]) {
    if ((s.name === metric.reconciles || s.name === metric.queueDepth || s.name === `${metric.duration}_count`) && s.labels.controller) names.add(s.labels.controller);
  }
  for (const t of window.ticks) for (const c of Object.keys(t.queueDepth)) names.add(c);
  const reconciles = increases(window, metric.reconciles);
  const errors = increases(window, metric.errors);
  const controllers = [...names].sort().map((controller): ControllerActivity => {
    const outcomes: Record<string, number> = {};
    for (const s of reconciles) if (s.labels.controller === controller && s.value > 0) outcomes[s.labels.outcome ?? '?'] = s.value;
    const duration = distribution(window, metric.duration, { controller });
    let peak = Number.NaN;
    let peakAt = Number.NaN;
    let keySeconds = 0;
    window.ticks.forEach((t, i) => {
      const depth = t.queueDepth[controller] ?? 0;
      if (Number.isNaN(peak) || depth > peak) {
        peak = depth;
        peakAt = t.seconds;
      }
      // Each tick's depth holds until the next tick (or the end scrape).
      const next = window.ticks[i + 1]?.seconds ?? window.seconds;
      keySeconds += depth * Math.max(0, next - t.seconds);
    });
    return {
      controller,
      reconciles: Object.values(outcomes).reduce((a, b) => a + b, 0),
      outcomes,
      errors: sum(errors.filter((s) => s.labels.controller === controller)),
      duration,
      busySeconds: sum(increases(window, `${metric.duration}_sum`).filter((s) => s.labels.controller === controller)),
      peakQueueDepth: peak,
      peakQueueAtSeconds: peakAt,
      queueKeySeconds: keySeconds,
    };
  });
  const github: Record<string, number> = {};
  for (const s of increases(window, metric.githubRequests)) if (s.value > 0) github[s.labels.resource ?? '?'] = (github[s.labels.resource ?? '?'] ?? 0) + s.value;
  const lags = window.ticks.map((t) => t.eventLoopLagMax).filter(Number.isFinite);
  const p99s = window.ticks.map((t) => t.eventLoopLagP99).filter(Number.isFinite);
  const pending = window.ticks.map((t) => t.webhookWritesPending).filter(Number.isFinite);
  return {
    seconds: window.seconds,
    controllers,
    webhookToApplied: distribution(window, metric.toApplied),
    webhookToReady: distribution(window, metric.toReady),
    webhookAnswer: distribution(window, metric.webhookAnswer),
    webhookWrite: distribution(window, metric.webhookWrite),
    peakWebhookWritesPending: pending.length ? Math.max(...pending) : Number.NaN,
    githubRequests: github,
    gcSeconds: sum(increases(window, `${metric.gc}_sum`)),
    eventLoopLagMaxMs: lags.length ? 1000 * Math.max(...lags) : Number.NaN,
    eventLoopLagP99MeanMs: p99s.length ? (1000 * p99s.reduce((a, b) => a + b, 0)) / p99s.length : Number.NaN,
  };
}

/** What one tick needs from a scrape: queue depths and the event-loop delay. */
export function tickOf(seconds: number, samples: readonly PromSample[]): ActivityTick {
  const queueDepth: Record<string, number> = {};
  for (const s of samples) if (s.name === metric.queueDepth && s.labels.controller) queueDepth[s.labels.controller] = s.value;
  const one = (name: string) => samples.find((s) => s.name === name)?.value ?? Number.NaN;
  return { seconds, queueDepth, eventLoopLagMax: one(metric.lagMax), eventLoopLagP99: one(metric.lagP99), webhookWritesPending: one(metric.webhookWritesPending) };
}

/**
 * Figures of a busy stretch (the burst): per controller what it did and how long keys waited
 * for it, then the operator-wide convergence histograms, GC and event-loop delay.
 */
export function burstActivityFigures(scenario: number, a: OperatorActivity, workers: Readonly<Record<string, number>> = {}): Figure[] {
  const figures: Figure[] = [];
  for (const c of a.controllers) {
    const p = `${c.controller}:`;
    figures.push(
      { scenario, name: `${p} reconciles`, value: c.reconciles, unit: 'count', note: Object.entries(c.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') },
      { scenario, name: `${p} reconcile duration, mean`, value: c.duration.meanMs, unit: 'ms' },
      { scenario, name: `${p} reconcile duration, p95 (histogram)`, value: c.duration.p95Ms, unit: 'ms' },
      { scenario, name: `${p} reconcile errors`, value: c.errors, unit: 'count' },
      { scenario, name: `${p} peak queue depth (sampled 1/s)`, value: c.peakQueueDepth, unit: 'count' },
      { scenario, name: `${p} mean wait in the queue (∫depth·dt ÷ reconciles)`, value: c.reconciles > 0 ? (1000 * c.queueKeySeconds) / c.reconciles : Number.NaN, unit: 'ms' },
      { scenario, name: `${p} workers busy on average${workers[c.controller] ? `, of ${workers[c.controller]}` : ''} (Σ durations ÷ wall time)`, value: a.seconds > 0 ? c.busySeconds / a.seconds : Number.NaN, unit: 'count' },
    );
  }
  figures.push(
    { scenario, name: 'operator histogram: webhook → applied, p50', value: a.webhookToApplied.p50Ms, unit: 'ms', note: `${a.webhookToApplied.count} observations` },
    { scenario, name: 'operator histogram: webhook → applied, p95', value: a.webhookToApplied.p95Ms, unit: 'ms' },
    { scenario, name: 'operator histogram: webhook → Ready, p50', value: a.webhookToReady.p50Ms, unit: 'ms' },
    { scenario, name: 'operator histogram: webhook → Ready, p95', value: a.webhookToReady.p95Ms, unit: 'ms' },
    ...(a.webhookAnswer.count > 0 ? [
      { scenario, name: 'operator histogram: webhook answer (body read → answer), p50', value: a.webhookAnswer.p50Ms, unit: 'ms' as const, note: `${a.webhookAnswer.count} deliveries` },
      { scenario, name: 'operator histogram: webhook answer (body read → answer), p95', value: a.webhookAnswer.p95Ms, unit: 'ms' as const },
    ] : []),
    ...(a.webhookWrite.count > 0 || Number.isFinite(a.peakWebhookWritesPending) ? [
      { scenario, name: 'webhook write after the answer, p50 (histogram)', value: a.webhookWrite.p50Ms, unit: 'ms' as const, note: `${a.webhookWrite.count} writes` },
      { scenario, name: 'webhook write after the answer, p95 (histogram)', value: a.webhookWrite.p95Ms, unit: 'ms' as const },
      { scenario, name: 'webhook writes pending, peak (sampled 1/s)', value: a.peakWebhookWritesPending, unit: 'count' as const },
    ] : []),
    { scenario, name: 'operator GC seconds', value: a.gcSeconds, unit: 's' },
    { scenario, name: 'operator event-loop delay, max (per-second samples)', value: a.eventLoopLagMaxMs, unit: 'ms' },
    { scenario, name: 'operator event-loop delay, p99 (mean of per-second samples)', value: a.eventLoopLagP99MeanMs, unit: 'ms' },
  );
  return figures;
}

/** Figures of a quiet stretch (idle): reconciles and errors per minute per controller. */
export function idleActivityFigures(scenario: number, a: OperatorActivity): Figure[] {
  const minutes = a.seconds / 60;
  return a.controllers.flatMap((c): Figure[] => [
    { scenario, name: `${c.controller}: reconciles per minute`, value: minutes > 0 ? c.reconciles / minutes : Number.NaN, unit: '/min', note: Object.entries(c.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') },
    { scenario, name: `${c.controller}: reconcile errors per minute`, value: minutes > 0 ? c.errors / minutes : Number.NaN, unit: '/min' },
  ]);
}

/** One line per controller, for the notes: what the figures above say, side by side. */
export function activityNote(a: OperatorActivity): string {
  const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'n/a');
  const idle = a.controllers.filter((c) => c.reconciles === 0 && c.errors === 0).map((c) => c.controller);
  const per = a.controllers.filter((c) => !idle.includes(c.controller)).map((c) =>
    `${c.controller} ${c.reconciles} reconciles (${Object.entries(c.outcomes).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}; ${c.errors} errors), mean ${ms(c.duration.meanMs)}, p95 ${ms(c.duration.p95Ms)}, ${c.busySeconds.toFixed(1)} worker-s busy, queue peak ${Number.isFinite(c.peakQueueDepth) ? `${c.peakQueueDepth} at ${c.peakQueueAtSeconds.toFixed(0)} s` : 'not sampled'}`);
  const gh = Object.entries(a.githubRequests).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  const parts = [...per, ...(idle.length ? [`no reconciles: ${idle.join(', ')}`] : [])];
  return `Operator's own metrics over ${a.seconds.toFixed(0)} s — ${parts.join('; ')}. GitHub responses by rate-limit resource: ${gh}.`;
}
