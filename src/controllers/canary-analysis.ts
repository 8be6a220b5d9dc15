// The canary analysis policy, pure: one observation of the canary's success rate updates the
// counters kept in the Algorithm's status (so they survive a restart of the operator) and
// yields a verdict. No samples is not success, and an unanswered query is neither.
import type { AlgorithmAnalysis } from '../../constructs/index.js';

/** How the analysis judges a canary. */
export interface AnalysisPolicy {
  /** Consecutive checks at or above the success threshold that promote the canary. */
  successChecks: number;
  /** Consecutive checks below it that roll it back (or mark it degraded), and consecutive empty checks that make it Inconclusive. */
  failureThreshold: number;
}

/** What one query told us. */
export type Observation = { kind: 'value'; value: number } | { kind: 'empty' } | { kind: 'error'; message: string };

export type Verdict =
  /** Keep analysing. */
  | 'continue'
  /** successChecks successes in a row. */
  | 'promote'
  /** failureThreshold failures in a row. */
  | 'fail'
  /** failureThreshold empty checks in a row. */
  | 'inconclusive';

export interface AnalysisStep {
  analysis: AlgorithmAnalysis;
  verdict: Verdict;
}

/**
 * Folds one observation into the analysis state. A success (value >= threshold) extends the
 * success streak and clears the others; a failure and an empty check likewise. An error
 * (Prometheus unreachable, query refused) breaks the success streak — a promotion needs
 * unbroken evidence — and leaves the failure and no-data streaks as they were.
 */
export function recordObservation(
  previous: AlgorithmAnalysis | undefined,
  observation: Observation,
  successThreshold: number,
  policy: AnalysisPolicy,
  time: string,
): AnalysisStep {
  const successes = previous?.consecutiveSuccesses ?? 0;
  const failures = previous?.consecutiveFailures ?? 0;
  const noData = previous?.consecutiveNoData ?? 0;
  let analysis: AlgorithmAnalysis;
  switch (observation.kind) {
    case 'value': {
      const ok = observation.value >= successThreshold;
      analysis = {
        value: observation.value,
        time,
        result: ok ? 'Success' : 'Failure',
        consecutiveSuccesses: ok ? successes + 1 : 0,
        consecutiveFailures: ok ? 0 : failures + 1,
        consecutiveNoData: 0,
      };
      break;
    }
    case 'empty':
      analysis = { time, result: 'NoData', consecutiveSuccesses: 0, consecutiveFailures: 0, consecutiveNoData: noData + 1 };
      break;
    case 'error':
      analysis = { time, result: 'Error', consecutiveSuccesses: 0, consecutiveFailures: failures, consecutiveNoData: noData };
      break;
  }
  return { analysis, verdict: verdictOf(analysis, policy) };
}

/** The verdict the counters stand at (also after a restart, without a new observation). */
export function verdictOf(analysis: AlgorithmAnalysis | undefined, policy: AnalysisPolicy): Verdict {
  if (!analysis) return 'continue';
  if ((analysis.consecutiveSuccesses ?? 0) >= policy.successChecks) return 'promote';
  if ((analysis.consecutiveFailures ?? 0) >= policy.failureThreshold) return 'fail';
  if ((analysis.consecutiveNoData ?? 0) >= policy.failureThreshold) return 'inconclusive';
  return 'continue';
}

/** The variables a query template may use. */
export interface QueryVariables {
  namespace: string;
  name: string;
  track: 'stable' | 'canary';
  /** A PromQL range, e.g. `1m`. */
  window: string;
}

/**
 * The success rate (non-5xx / total) of one track, over `http_requests_total{namespace,
 * algorithm, track, code}`. An empty vector when the track served nothing in the window.
 */
export const defaultSuccessRateQuery =
  'sum(rate(http_requests_total{namespace="{{namespace}}",algorithm="{{name}}",track="{{track}}",code!~"5.."}[{{window}}]))' +
  ' / sum(rate(http_requests_total{namespace="{{namespace}}",algorithm="{{name}}",track="{{track}}"}[{{window}}]))';

/** Fills `{{namespace}}`, `{{name}}`, `{{track}}` and `{{window}}`; any other placeholder is an error. */
export function renderQuery(template: string, variables: QueryVariables): string {
  return template.replace(/\{\{\s*([a-zA-Z]+)\s*\}\}/g, (whole, key: string) => {
    if (!(key in variables))
      throw new Error(`analysis query template: unknown placeholder ${whole} (use {{namespace}}, {{name}}, {{track}}, {{window}})`);
    return String(variables[key as keyof QueryVariables]);
  });
}

/** `1m`, `30s`, `1m30s` as a PromQL range for a duration in milliseconds (whole seconds, at least 1 s). */
export function promDuration(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds % 60 === 0 ? `${seconds / 60}m` : seconds > 60 ? `${Math.floor(seconds / 60)}m${seconds % 60}s` : `${seconds}s`;
}
