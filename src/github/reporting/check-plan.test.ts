import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planCheck, type CheckRunWrite, type CommitStatusWrite } from './check-plan.js';
import type { EnvironmentReport, ReportedGitHubIds } from './reporter.js';

const a = 'a'.repeat(40);
const b = 'b'.repeat(40);
const url = 'https://pr-1.preview.example.com';
const report = (r: Partial<EnvironmentReport>): EnvironmentReport => ({
  repository: { owner: 'o', name: 'r' },
  pullRequest: 1,
  headSha: a,
  state: 'deploying',
  resources: [],
  reasons: [],
  known: {},
  ...r,
});

describe('planCheck with a GitHub App (check runs)', () => {
  it('creates a run on the head SHA, then updates that run as the state changes', () => {
    const first = planCheck(report({ state: 'queued' }), {}, 'check-run') as CheckRunWrite;
    assert.deepEqual([first.action, first.sha, first.status, first.conclusion, first.title], ['create', a, 'queued', undefined, 'Queued']);
    const known: ReportedGitHubIds = { checkRunId: 3, checkSha: a, checkState: first.key };
    const ready = planCheck(report({ state: 'ready', url }), known, 'check-run') as CheckRunWrite;
    assert.deepEqual([ready.action, ready.status, ready.conclusion, ready.detailsUrl], ['update', 'completed', 'success', url]);
    assert.match(ready.summary, /\*\*URL:\*\* https:\/\/pr-1\.preview\.example\.com/);
  });

  it('writes nothing when the run already says the same', () => {
    const plan = planCheck(report({ state: 'deploying' }), {}, 'check-run') as CheckRunWrite;
    assert.equal(planCheck(report({ state: 'deploying' }), { checkRunId: 3, checkSha: a, checkState: plan.key }, 'check-run'), undefined);
  });

  it('updates the run when only its summary changed (a resource became ready)', () => {
    const plan = planCheck(report({ resources: [{ kind: 'Database', name: 'd', ready: false }] }), {}, 'check-run') as CheckRunWrite;
    const next = planCheck(
      report({ resources: [{ kind: 'Database', name: 'd', ready: true }] }),
      { checkRunId: 3, checkSha: a, checkState: plan.key },
      'check-run',
    );
    assert.equal(next?.kind === 'check-run' && next.action, 'update');
  });

  it('creates a new run for a new head SHA', () => {
    const plan = planCheck(
      report({ headSha: b }),
      { checkRunId: 3, checkSha: a, checkState: 'completed/success/x' },
      'check-run',
    ) as CheckRunWrite;
    assert.deepEqual([plan.action, plan.sha], ['create', b]);
  });

  it('fails the run with the reasons in its summary', () => {
    const plan = planCheck(report({ state: 'failed', reasons: ['config error at /a/b'] }), {}, 'check-run') as CheckRunWrite;
    assert.deepEqual([plan.status, plan.conclusion], ['completed', 'failure']);
    assert.match(plan.summary, /config error at \/a\/b/);
  });

  it('on teardown completes a run still in progress, but leaves a finished verdict alone', () => {
    const inProgress = planCheck(report({}), {}, 'check-run') as CheckRunWrite;
    const destroyed = planCheck(
      report({ state: 'destroyed' }),
      { checkRunId: 3, checkSha: a, checkState: inProgress.key },
      'check-run',
    ) as CheckRunWrite;
    assert.deepEqual([destroyed.action, destroyed.status, destroyed.conclusion], ['update', 'completed', 'cancelled']);
    const expired = planCheck(
      report({ state: 'expired' }),
      { checkRunId: 3, checkSha: a, checkState: inProgress.key },
      'check-run',
    ) as CheckRunWrite;
    assert.equal(expired.conclusion, 'neutral');
    assert.equal(
      planCheck(report({ state: 'destroyed' }), { checkRunId: 3, checkSha: a, checkState: destroyed.key }, 'check-run'),
      undefined,
    );
    assert.equal(
      planCheck(report({ state: 'destroyed' }), { checkRunId: 3, checkSha: a, checkState: 'completed/success/x' }, 'check-run'),
      undefined,
    );
    assert.equal(planCheck(report({ state: 'destroyed' }), {}, 'check-run'), undefined);
  });
});

describe('planCheck with a token (commit statuses)', () => {
  it('maps states to pending / success (with the URL) / failure', () => {
    const states = (['queued', 'waiting-for-checks', 'deploying', 'ready', 'failed'] as const).map(
      (state) => planCheck(report({ state, url, reasons: ['boom'] }), {}, 'commit-status') as CommitStatusWrite,
    );
    assert.deepEqual(
      states.map((s) => s.state),
      ['pending', 'pending', 'pending', 'success', 'failure'],
    );
    assert.equal(states[3]!.targetUrl, url);
    assert.equal(states[2]!.targetUrl, undefined);
    assert.equal(states[4]!.description, 'boom');
    assert.ok(states.every((s) => s.description.length <= 140 && s.sha === a));
  });

  it('writes nothing when the status already says the same, and writes again on a new SHA', () => {
    const plan = planCheck(report({ state: 'ready', url }), {}, 'commit-status') as CommitStatusWrite;
    assert.equal(planCheck(report({ state: 'ready', url }), { checkSha: a, checkState: plan.key }, 'commit-status'), undefined);
    assert.equal(planCheck(report({ state: 'ready', url, headSha: b }), { checkSha: a, checkState: plan.key }, 'commit-status')?.sha, b);
  });

  it('turns a pending status into an error on teardown, so it never blocks', () => {
    const pending = planCheck(report({}), {}, 'commit-status') as CommitStatusWrite;
    const gone = planCheck(report({ state: 'destroyed' }), { checkSha: a, checkState: pending.key }, 'commit-status') as CommitStatusWrite;
    assert.equal(gone.state, 'error');
    assert.equal(planCheck(report({ state: 'destroyed' }), { checkSha: a, checkState: gone.key }, 'commit-status'), undefined);
  });
});
