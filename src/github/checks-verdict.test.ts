import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checksVerdict, type CheckRunFact, type CommitChecks } from './checks-verdict.js';

const run = (name: string, status: string, conclusion: string | null = null, suiteId = 1): CheckRunFact => ({
  name,
  status,
  conclusion,
  suiteId,
  appSlug: 'ci',
});
const facts = (partial: Partial<CommitChecks>): CommitChecks => ({ runs: [], suites: [], statuses: [], ...partial });

describe('checksVerdict, named checks', () => {
  const required = { mode: 'named', checks: ['build', 'test'] } as const;

  it('waits for a required check nobody reported yet', () => {
    const v = checksVerdict(required, facts({ runs: [run('build', 'completed', 'success')] }));
    assert.equal(v.state, 'pending');
    assert.deepEqual(v.pending, ['test']);
    assert.deepEqual(v.passed, ['build']);
    assert.equal(v.message, 'waiting for test');
  });

  it('passes when every required check run or status succeeded (neutral and skipped count as success)', () => {
    const v = checksVerdict(
      required,
      facts({ runs: [run('Build', 'completed', 'neutral')], statuses: [{ context: 'test', state: 'success' }] }),
    );
    assert.equal(v.state, 'passed');
    assert.deepEqual(v.passed, ['build', 'test']);
  });

  it('fails on any failing required check, even while another still runs', () => {
    const v = checksVerdict(required, facts({ runs: [run('build', 'in_progress'), run('test', 'completed', 'timed_out')] }));
    assert.equal(v.state, 'failed');
    assert.deepEqual(v.failing, ['test']);
    assert.deepEqual(v.pending, ['build']);
    assert.equal(v.message, 'checks failed: test');
  });

  it('ignores checks not required, and a commit status in error fails', () => {
    const v = checksVerdict(
      required,
      facts({
        runs: [run('build', 'completed', 'success'), run('lint', 'completed', 'failure')],
        statuses: [{ context: 'test', state: 'error' }],
      }),
    );
    assert.deepEqual([v.state, v.failing], ['failed', ['test']]);
  });
});

describe('checksVerdict, all checks', () => {
  it("needs every run and status, never the operator's own check", () => {
    const v = checksVerdict(
      { mode: 'all' },
      facts({
        runs: [run('build', 'completed', 'success', 1), run('preview-operator', 'in_progress', null, 2)],
        suites: [
          { id: 1, status: 'completed', conclusion: 'success', latestCheckRunsCount: 1, appSlug: 'ci' },
          { id: 2, status: 'in_progress', conclusion: null, latestCheckRunsCount: 1, appSlug: 'preview' },
        ],
        statuses: [{ context: 'deploy/docs', state: 'pending' }],
      }),
      ['preview-operator'],
    );
    assert.equal(v.state, 'pending');
    assert.deepEqual(v.pending, ['deploy/docs']);
    assert.deepEqual(v.passed, ['build']);
  });

  it('skips suites without runs (GitHub leaves them queued for ever) but waits for a suite with runs it cannot see', () => {
    const v = checksVerdict(
      { mode: 'all' },
      facts({
        suites: [
          { id: 7, status: 'queued', conclusion: null, latestCheckRunsCount: 0, appSlug: 'dependabot' },
          { id: 8, status: 'in_progress', conclusion: null, latestCheckRunsCount: 2, appSlug: 'other-ci' },
        ],
      }),
    );
    assert.deepEqual([v.state, v.pending], ['pending', ['check suite of other-ci']]);
  });

  it('passes a commit nothing reported on, and a re-run that succeeded after a failure counts by its latest attempt', () => {
    assert.equal(checksVerdict({ mode: 'all' }, facts({})).state, 'passed');
    assert.equal(checksVerdict({ mode: 'none' }, facts({ runs: [run('x', 'completed', 'failure')] })).state, 'passed');
  });
});
