// The rollout step of the Algorithm reconciler: which image is stable, whether a canary runs,
// and — when one is due — one analysis of the canary's success rate against a
// Prometheus-compatible API, folded into the counters kept in status. The decisions are the
// pure ones of rollout-plan.ts and canary-analysis.ts; this adds the clock and the query.
import type { AlgorithmResource, AlgorithmStatus } from '../../constructs/index.js';
import {
  defaultSuccessRateQuery,
  promDuration,
  recordObservation,
  renderQuery,
  verdictOf,
  type AnalysisPolicy,
  type Observation,
} from './canary-analysis.js';
import type { AnalysisReport, Rollout } from './algorithm-status.js';
import { PrometheusUnavailableError, queryPrometheus } from './prometheus-query.js';
import { concludeRollout, planRollout, type RolloutState } from './rollout-plan.js';
import type { WorkloadSummary } from './rollout-workload-status.js';

/** Canary analysis settings. */
export interface AlgorithmAnalysisOptions {
  /** Time between two analyses of a canary; the first runs one interval after the canary starts. @default 60_000 */
  intervalMs?: number;
  /** Consecutive checks at or above `lifecycle.successThreshold` that promote. @default 3 */
  successChecks?: number;
  /**
   * Consecutive checks below it that roll back (with `rollbackOnDrift`), and consecutive empty
   * checks that make the rollout Inconclusive. @default 5
   */
  failureThreshold?: number;
  /** Base URL of the Prometheus-compatible HTTP API (`<url>/api/v1/query`). @default - none: analysis reports Error and never promotes */
  prometheusUrl?: string;
  /**
   * PromQL giving a track's success rate (0..1), with `{{namespace}}`, `{{name}}`, `{{track}}`,
   * `{{window}}`. @default defaultSuccessRateQuery
   */
  query?: string;
  /** The `{{window}}` range. @default the interval, at least 1m */
  window?: string;
  /** A query not answered within this is an error. @default 10_000 */
  queryTimeoutMs?: number;
  /** Runs one query (tests answer without a server). @default queryPrometheus */
  queryPrometheus?: typeof queryPrometheus;
}

/** What the rollout step reads of the Algorithm's workloads. */
export interface ObservedTracks {
  stable: WorkloadSummary | undefined;
  canary: WorkloadSummary | undefined;
}

export class CanaryAnalysis {
  readonly policy: AnalysisPolicy;
  readonly intervalMs: number;
  private readonly window: string;
  private readonly query: string;

  constructor(private readonly options: AlgorithmAnalysisOptions = {}) {
    this.intervalMs = options.intervalMs ?? 60_000;
    this.policy = { successChecks: options.successChecks ?? 3, failureThreshold: options.failureThreshold ?? 5 };
    this.window = options.window ?? promDuration(Math.max(this.intervalMs, 60_000));
    this.query = options.query ?? defaultSuccessRateQuery;
    // Fail at start, not at the first canary, on a template with an unknown placeholder.
    renderQuery(this.query, { namespace: 'n', name: 'a', track: 'canary', window: '1m' });
  }

  /** The rollout for this reconcile: planned from spec and status, analysed when due, concluded. */
  async decide(
    algorithm: AlgorithmResource,
    status: AlgorithmStatus,
    tracks: ObservedTracks,
    now: Date,
    signal: AbortSignal,
  ): Promise<Rollout> {
    const { spec } = algorithm;
    const nowIso = now.toISOString();
    let plan = planRollout(spec, rolloutStateOf(status), { image: tracks.stable?.image }, nowIso);
    const report: AnalysisReport = { ran: false };
    const canary = tracks.canary?.image === plan.state.canaryImage ? tracks.canary : undefined;
    if (plan.mode === 'canary' && !plan.started) {
      if (canary?.failure) {
        report.canaryFailure = `canary ${plan.state.canaryImage} did not become available: ${canary.failure}`;
      } else if (canary && canary.ready > 0 && now.getTime() >= this.due(plan.state)) {
        const observation = await this.observe(algorithm, signal);
        const step = recordObservation(plan.state.lastAnalysis, observation, spec.lifecycle?.successThreshold ?? 0.99, this.policy, nowIso);
        plan = { ...plan, state: { ...plan.state, lastAnalysis: step.analysis } };
        report.ran = true;
        if (observation.kind === 'error') report.error = observation.message;
      }
    }
    const verdict = report.canaryFailure ? 'fail' : verdictOf(plan.state.lastAnalysis, this.policy);
    const concluded = concludeRollout(plan, verdict, spec.lifecycle?.rollbackOnDrift ?? true);
    return { plan: concluded.plan, outcome: concluded.outcome, report };
  }

  /** When the next analysis of the current canary is due (ms since the epoch). */
  due(state: RolloutState): number {
    const last = Math.max(Date.parse(state.lastAnalysis?.time ?? '') || 0, Date.parse(state.canaryStartTime ?? '') || 0);
    return last + this.intervalMs;
  }

  /** The canary's success rate, or why it could not be had. */
  private async observe(algorithm: AlgorithmResource, signal: AbortSignal): Promise<Observation> {
    const url = this.options.prometheusUrl;
    if (!url) return { kind: 'error', message: 'no Prometheus URL is configured for canary analysis' };
    const { name, namespace = '' } = algorithm.metadata;
    const query = renderQuery(this.query, { namespace, name, track: 'canary', window: this.window });
    const run = this.options.queryPrometheus ?? queryPrometheus;
    try {
      const result = await run(url, query, { timeoutMs: this.options.queryTimeoutMs ?? 10_000, signal });
      return result.kind === 'value' ? { kind: 'value', value: result.value } : { kind: 'empty' };
    } catch (err) {
      if (err instanceof PrometheusUnavailableError) return { kind: 'error', message: err.message };
      throw err;
    }
  }
}

function rolloutStateOf(status: AlgorithmStatus): Partial<RolloutState> {
  return {
    stableImage: status.stableImage,
    canaryImage: status.canaryImage,
    canaryStartTime: status.canaryStartTime,
    rolledBackImage: status.rolledBackImage,
    lastAnalysis: status.lastAnalysis,
  };
}
