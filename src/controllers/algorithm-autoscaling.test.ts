import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderAlgorithmWorkloads, type AlgorithmSpec } from '../../constructs/index.js';
import { decideAutoscaling, type CustomMetricsProbe, type MetricAvailability } from './algorithm-autoscaling.js';

const probe = (answer: MetricAvailability): CustomMetricsProbe => ({ check: async () => answer }) as unknown as CustomMetricsProbe;
const served = probe({ available: true });
const absent = probe({
  available: false,
  reason: 'CustomMetricsAPIUnavailable',
  message: 'the custom metrics API (custom.metrics.k8s.io/v1beta1) is not served',
});
const spec: AlgorithmSpec = { image: 'i', replicas: 3, scaling: { minReplicas: 1, maxReplicas: 10, targetLatencyMs: 50 } };

const hpaMetrics = (latencyMetric: string | null) => {
  const hpa = renderAlgorithmWorkloads({ metadata: { name: 'a', namespace: 'n' }, spec }, { latencyMetric }).find(
    (o) => o.kind === 'HorizontalPodAutoscaler',
  )!;
  return (hpa as unknown as { spec: { metrics: { type: string }[] } }).spec.metrics.map((m) => m.type);
};

describe('autoscaling decision', () => {
  it('targets the per-pod latency metric when the custom metrics API serves it', async () => {
    const decision = await decideAutoscaling(spec, 4, served, 'request_latency_milliseconds');
    assert.equal(decision.latencyMetric, 'request_latency_milliseconds');
    assert.deepEqual(
      { ...decision.condition, message: undefined },
      { type: 'AutoscalingDegraded', status: 'False', reason: 'LatencyTarget', observedGeneration: 4, message: undefined },
    );
    assert.deepEqual(hpaMetrics(decision.latencyMetric), ['Pods']);
  });

  it('falls back to CPU and says why when it does not', async () => {
    const decision = await decideAutoscaling(spec, 4, absent, 'request_latency_milliseconds');
    assert.equal(decision.latencyMetric, null);
    assert.equal(decision.condition?.status, 'True');
    assert.equal(decision.condition?.reason, 'CustomMetricsAPIUnavailable');
    assert.match(decision.condition!.message, /falls back to CPU utilisation instead of targetLatencyMs 50/);
    assert.deepEqual(hpaMetrics(decision.latencyMetric), ['Resource']);
  });

  it('needs no custom metrics without a latency target, and no condition without scaling', async () => {
    const cpu = await decideAutoscaling({ ...spec, scaling: { minReplicas: 1, maxReplicas: 3 } }, 1, absent, 'm');
    assert.equal(cpu.condition?.status, 'False');
    assert.equal(cpu.condition?.reason, 'CPUTarget');
    assert.deepEqual(await decideAutoscaling({ image: 'i' }, 1, absent, 'm'), { latencyMetric: null, condition: undefined });
  });
});
