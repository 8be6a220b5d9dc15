// The bench's reading of the operator's /metrics: the exposition text, histogram quantiles, and
// per-controller activity between two scrapes of the real OperatorMetrics registry — so a
// renamed metric in src/server/metrics.ts shows up here, not as empty bench figures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activityNote, burstActivityFigures, histogramQuantile, idleActivityFigures, operatorActivity, tickOf } from '../bench/controller-activity.js';
import { parsePrometheusText } from '../bench/prometheus-text.js';
import { OperatorMetrics } from '../src/server/metrics.js';

test('the exposition text is read with labels, escapes, special values and comments', () => {
  const samples = parsePrometheusText([
    '# HELP x_total Things.',
    '# TYPE x_total counter',
    'x_total{controller="preview-environment",outcome="success"} 12',
    'odd{path="/a,b}c",quote="say \\"hi\\"",nl="a\\nb"} 3.5 1700000000000',
    'h_bucket{le="+Inf"} 7',
    'plain 0.25',
    'missing NaN',
    '',
  ].join('\n'));
  assert.equal(samples.length, 5);
  assert.deepEqual(samples[0], { name: 'x_total', labels: { controller: 'preview-environment', outcome: 'success' }, value: 12 });
  assert.deepEqual(samples[1]!.labels, { path: '/a,b}c', quote: 'say "hi"', nl: 'a\nb' });
  assert.equal(samples[1]!.value, 3.5);
  assert.equal(samples[2]!.labels.le, '+Inf');
  assert.equal(samples[3]!.value, 0.25);
  assert.ok(Number.isNaN(samples[4]!.value));
  assert.throws(() => parsePrometheusText('bad{x=1} 2'), /malformed labels/);
});

test('histogram quantiles interpolate inside the bucket as histogram_quantile does', () => {
  // 10 observations: 4 in (0, 0.1], 4 in (0.1, 1], 2 in (1, +Inf).
  const buckets = [{ le: 0.1, count: 4 }, { le: 1, count: 8 }, { le: Number.POSITIVE_INFINITY, count: 10 }];
  assert.equal(histogramQuantile(0.2, buckets), 0.05); // rank 2 of 4 in the first bucket, from 0
  assert.equal(histogramQuantile(0.6, buckets), 0.55); // rank 6: 2 of 4 into (0.1, 1]
  assert.equal(histogramQuantile(0.95, buckets), 1); // in the +Inf bucket: the highest finite bound
  assert.ok(Number.isNaN(histogramQuantile(0.5, [{ le: 1, count: 0 }, { le: Number.POSITIVE_INFINITY, count: 0 }])));
});

test('per-controller activity between two scrapes of the operator registry: reconciles, errors, durations, queue wait', async () => {
  const metrics = new OperatorMetrics({ processMetrics: false });
  // Before the window: one reconcile that must not be counted.
  metrics.reconcileFinished('preview-environment', 'success', 5000);
  metrics.queueDepth('preview-environment', 0);
  const start = parsePrometheusText(await metrics.metrics());

  for (let i = 0; i < 9; i++) metrics.reconcileFinished('preview-environment', 'success', 1500); // (1, 2.5] s
  metrics.reconcileFinished('preview-environment', 'error', 20_000); // (10, 30] s
  metrics.retried('preview-environment');
  for (let i = 0; i < 4; i++) metrics.reconcileFinished('database', 'success', 20);
  metrics.observeWebhookToApplied(3);
  metrics.observeWebhookToReady(8);

  // Queue depth over 10 s: 8 keys waiting for 5 s, then 2 for 5 s → 50 key-seconds.
  metrics.queueDepth('preview-environment', 8);
  metrics.queueDepth('database', 1);
  const t0 = tickOf(0, parsePrometheusText(await metrics.metrics()));
  metrics.queueDepth('preview-environment', 2);
  metrics.queueDepth('database', 0);
  const t5 = tickOf(5, parsePrometheusText(await metrics.metrics()));
  const end = parsePrometheusText(await metrics.metrics());

  const a = operatorActivity({ start, end, seconds: 10, ticks: [t0, t5] });
  const pe = a.controllers.find((c) => c.controller === 'preview-environment')!;
  const db = a.controllers.find((c) => c.controller === 'database')!;
  assert.equal(pe.reconciles, 10);
  assert.deepEqual(pe.outcomes, { success: 9, error: 1 });
  assert.equal(pe.errors, 1);
  assert.ok(Math.abs(pe.duration.meanMs - (9 * 1500 + 20_000) / 10) < 1e-6, `mean ${pe.duration.meanMs}`);
  assert.ok(pe.duration.p50Ms > 1000 && pe.duration.p50Ms <= 2500, `p50 ${pe.duration.p50Ms}`);
  assert.ok(pe.duration.p95Ms > 10_000 && pe.duration.p95Ms <= 30_000, `p95 ${pe.duration.p95Ms}`);
  assert.ok(Math.abs(pe.busySeconds - 33.5) < 1e-6);
  assert.equal(pe.peakQueueDepth, 8);
  assert.equal(pe.peakQueueAtSeconds, 0);
  assert.equal(pe.queueKeySeconds, 50);
  assert.equal(db.reconciles, 4);
  assert.equal(db.errors, 0);
  assert.equal(db.peakQueueDepth, 1);
  assert.equal(a.webhookToApplied.count, 1);
  assert.ok(a.webhookToReady.p50Ms > 5000 && a.webhookToReady.p50Ms <= 10_000);

  const figures = burstActivityFigures(4, a);
  const value = (name: string) => figures.find((f) => f.name === name)?.value;
  assert.equal(value('preview-environment: reconciles'), 10);
  assert.equal(value('preview-environment: peak queue depth (sampled 1/s)'), 8);
  assert.equal(value('preview-environment: mean wait in the queue (∫depth·dt ÷ reconciles)'), 5000); // 50 key-s ÷ 10
  assert.equal(value('preview-environment: workers busy on average (Σ durations ÷ wall time)'), 3.35);
  assert.equal(value('database: reconcile errors'), 0);

  const withWorkers = burstActivityFigures(4, a, { 'preview-environment': 12 });
  assert.ok(withWorkers.some((f) => f.name === 'preview-environment: workers busy on average, of 12 (Σ durations ÷ wall time)' && f.value === 3.35));

  const note = activityNote(a);
  assert.match(note, /preview-environment 10 reconciles \(success 9, error 1; 1 errors\), mean 3350 ms, p95 20000 ms, 33.5 worker-s busy, queue peak 8 at 0 s/);
  assert.match(activityNote({ ...a, controllers: a.controllers.map((c) => ({ ...c, reconciles: 0, errors: 0, outcomes: {} })) }), /no reconciles: database, preview-environment\./);

  const idle = idleActivityFigures(5, { ...a, seconds: 120 });
  assert.equal(idle.find((f) => f.name === 'preview-environment: reconciles per minute')?.value, 5);
});
