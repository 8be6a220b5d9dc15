// Can the autoscaler target a per-pod latency metric? Only if the custom metrics API
// (`custom.metrics.k8s.io/v1beta1`, an aggregated API such as prometheus-adapter) is served
// and lists the metric for pods. Otherwise the HPA falls back to CPU and the Algorithm says
// why in its `AutoscalingDegraded` condition. The answer is cached for a while: it changes
// when someone installs an adapter, not between two reconciles.
import type { AlgorithmSpec } from '../../constructs/index.js';
import { NotFoundError, toKubeError, type ConditionInput, type ObjectClient } from '../kube/index.js';

export const customMetricsApiPath = '/apis/custom.metrics.k8s.io/v1beta1';

export type MetricAvailability = { available: true } | { available: false; reason: string; message: string };

export class CustomMetricsProbe {
  private cached: { at: number; resources: Set<string> | undefined; error?: string } | undefined;
  private pending: Promise<void> | undefined;

  /** @param ttlMs how long an answer is reused (default 60 s). */
  constructor(
    private readonly client: ObjectClient,
    private readonly ttlMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `pods/<metric>` is served by the custom metrics API. */
  async check(metric: string): Promise<MetricAvailability> {
    if (!this.cached || this.now() - this.cached.at >= this.ttlMs) {
      this.pending ??= this.fetch().finally(() => (this.pending = undefined));
      await this.pending;
    }
    const { resources, error } = this.cached!;
    if (!resources) {
      return {
        available: false,
        reason: 'CustomMetricsAPIUnavailable',
        message: error ?? `the custom metrics API (${customMetricsApiPath.slice(6)}) is not served`,
      };
    }
    if (!resources.has(`pods/${metric}`)) {
      return {
        available: false,
        reason: 'LatencyMetricNotServed',
        message: `the custom metrics API does not serve the pod metric ${metric}`,
      };
    }
    return { available: true };
  }

  private async fetch(): Promise<void> {
    try {
      const list = await this.client.request<{ resources?: { name: string }[] }>({ path: customMetricsApiPath });
      this.cached = { at: this.now(), resources: new Set((list?.resources ?? []).map((r) => r.name)) };
    } catch (err) {
      const message =
        err instanceof NotFoundError
          ? `the custom metrics API (${customMetricsApiPath.slice(6)}) is not served`
          : `the custom metrics API could not be read: ${toKubeError(err).message}`;
      this.cached = { at: this.now(), resources: undefined, error: message };
    }
  }
}

export interface AutoscalingDecision {
  /** The renderer's `latencyMetric`: the metric name, or null for the CPU fallback. */
  latencyMetric: string | null;
  /** The `AutoscalingDegraded` condition, or undefined when the Algorithm does not autoscale. */
  condition: ConditionInput | undefined;
}

/** How the HPA of `spec` scales, given what the custom metrics API serves. */
export async function decideAutoscaling(
  spec: AlgorithmSpec,
  generation: number | undefined,
  probe: CustomMetricsProbe,
  latencyMetric: string,
): Promise<AutoscalingDecision> {
  if (!spec.scaling) return { latencyMetric: null, condition: undefined };
  const base = { type: 'AutoscalingDegraded', observedGeneration: generation };
  if (spec.scaling.targetLatencyMs === undefined) {
    return {
      latencyMetric: null,
      condition: { ...base, status: 'False', reason: 'CPUTarget', message: 'no latency target: the autoscaler targets CPU utilisation' },
    };
  }
  const availability = await probe.check(latencyMetric);
  if (availability.available) {
    return {
      latencyMetric,
      condition: {
        ...base,
        status: 'False',
        reason: 'LatencyTarget',
        message: `the autoscaler targets ${latencyMetric} at ${spec.scaling.targetLatencyMs} ms per pod`,
      },
    };
  }
  return {
    latencyMetric: null,
    condition: {
      ...base,
      status: 'True',
      reason: availability.reason,
      message: `${availability.message}; the autoscaler falls back to CPU utilisation instead of targetLatencyMs ${spec.scaling.targetLatencyMs}`,
    },
  };
}
