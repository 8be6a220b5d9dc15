import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultSuccessRateQuery,
  promDuration,
  recordObservation,
  renderQuery,
  verdictOf,
  type AnalysisPolicy,
  type Observation,
} from './canary-analysis.js';
import type { AlgorithmAnalysis } from '../../constructs/index.js';

const policy: AnalysisPolicy = { successChecks: 3, failureThreshold: 5 };

function run(observations: Observation[], threshold = 0.99) {
  let analysis: AlgorithmAnalysis | undefined;
  const verdicts: string[] = [];
  observations.forEach((o, i) => {
    const step = recordObservation(analysis, o, threshold, policy, `2026-01-01T00:00:0${i}Z`);
    analysis = step.analysis;
    verdicts.push(step.verdict);
  });
  return { analysis: analysis!, verdicts };
}

const ok: Observation = { kind: 'value', value: 0.999 };
const bad: Observation = { kind: 'value', value: 0.9 };
const empty: Observation = { kind: 'empty' };
const down: Observation = { kind: 'error', message: 'connection refused' };

describe('canary analysis', () => {
  it('promotes after successChecks consecutive successes, the threshold itself counting as success', () => {
    assert.deepEqual(run([ok, ok, ok]).verdicts, ['continue', 'continue', 'promote']);
    assert.deepEqual(run([{ kind: 'value', value: 0.99 }, ok, ok]).verdicts.at(-1), 'promote');
  });

  it('fails after failureThreshold consecutive failures, and a success in between starts the count over', () => {
    assert.deepEqual(run([bad, bad, bad, bad, bad]).verdicts.at(-1), 'fail');
    const { analysis, verdicts } = run([bad, bad, ok, bad, bad, bad, bad]);
    assert.equal(verdicts.at(-1), 'continue');
    assert.equal(analysis.consecutiveFailures, 4);
    assert.equal(analysis.value, 0.9);
    assert.equal(analysis.result, 'Failure');
  });

  it('never counts no samples as success: failureThreshold empty checks are inconclusive', () => {
    const { analysis, verdicts } = run([ok, ok, empty, empty, empty, empty, empty]);
    assert.deepEqual(verdicts.slice(2), ['continue', 'continue', 'continue', 'continue', 'inconclusive']);
    assert.equal(analysis.consecutiveSuccesses, 0);
    assert.equal(analysis.value, undefined);
    assert.equal(analysis.result, 'NoData');
  });

  it('an unreachable Prometheus never promotes: an error breaks the success streak', () => {
    const { analysis, verdicts } = run([ok, ok, down, ok, ok, down, down, down, down, down, down]);
    assert.ok(!verdicts.includes('promote'));
    assert.equal(analysis.result, 'Error');
    assert.equal(analysis.consecutiveSuccesses, 0);
    // ...and does not fake failures or empty checks either.
    assert.equal(run([bad, bad, down, bad]).analysis.consecutiveFailures, 3);
  });

  it('reads the verdict back from counters kept in status', () => {
    assert.equal(verdictOf({ consecutiveSuccesses: 3 }, policy), 'promote');
    assert.equal(verdictOf({ consecutiveFailures: 5 }, policy), 'fail');
    assert.equal(verdictOf({ consecutiveNoData: 5 }, policy), 'inconclusive');
    assert.equal(verdictOf(undefined, policy), 'continue');
  });

  it('renders the query template and rejects unknown placeholders', () => {
    const q = renderQuery(defaultSuccessRateQuery, { namespace: 'ns', name: 'reco', track: 'canary', window: '1m' });
    assert.match(q, /namespace="ns",algorithm="reco",track="canary",code!~"5\.\."\}\[1m\]/);
    assert.ok(!q.includes('{{'));
    assert.throws(
      () => renderQuery('up{job="{{job}}"}', { namespace: 'n', name: 'a', track: 'stable', window: '1m' }),
      /unknown placeholder \{\{job\}\}/,
    );
  });

  it('formats PromQL durations', () => {
    assert.equal(promDuration(60_000), '1m');
    assert.equal(promDuration(5_000), '5s');
    assert.equal(promDuration(90_000), '1m30s');
    assert.equal(promDuration(10), '1s');
  });
});
