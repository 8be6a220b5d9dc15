// The recording Reporter the controller's tests use must behave like the GitHub one: the
// same ids evolve the same way, and an unchanged report means no write.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EnvironmentReport, ReportedGitHubIds } from '../../src/github/reporting/reporter.js';
import { RecordingReporter } from '../support/recording-reporter.js';

const repository = { owner: 'acme', name: 'shop' };
const a = 'a'.repeat(40);
const b = 'b'.repeat(40);
const url = 'https://pr-3.preview.example.com';

function session(reporter: RecordingReporter) {
  let known: ReportedGitHubIds = {};
  return async (r: Partial<EnvironmentReport>) => {
    known = await reporter.report({ repository, pullRequest: 3, headSha: a, state: 'deploying', resources: [], reasons: [], ...r, known });
    return known;
  };
}

describe('RecordingReporter', () => {
  it('records each call with the writes the GitHub reporter would make, and none for an unchanged report', async () => {
    const reporter = new RecordingReporter();
    const report = session(reporter);
    await report({ state: 'deploying' });
    const ready = await report({ state: 'ready', url, deployedSha: a });
    const again = await report({ state: 'ready', url, deployedSha: a });
    assert.deepEqual(again, ready);
    assert.deepEqual(
      reporter.reports.map((r) => r.writes),
      [
        ['comment:create', 'deployment:create', 'deployment-status:in_progress', 'check-run:create'],
        ['comment:update', 'deployment-status:success', 'check-run:update'],
        [],
      ],
    );
    assert.deepEqual(reporter.statesFor(repository, 3), ['deploying', 'ready']);
    assert.match(reporter.lastFor(repository, 3)!.comment, /\*\*URL:\*\* https:\/\/pr-3\.preview\.example\.com/);
  });

  it('models a new SHA (new Deployment, old one retired once ready) and teardown', async () => {
    const reporter = new RecordingReporter('commit-status');
    const report = session(reporter);
    const first = await report({ state: 'ready', url, deployedSha: a });
    await report({ state: 'deploying', headSha: b, deployedSha: a });
    const second = await report({ state: 'ready', url, headSha: b, deployedSha: b });
    assert.notEqual(second.deploymentId, first.deploymentId);
    assert.equal(second.commentId, first.commentId);
    assert.deepEqual(reporter.reports.at(-1)!.writes, [
      'comment:update',
      'deployment-status:success',
      'deployment-status:inactive',
      'commit-status:success',
    ]);
    await report({ state: 'destroyed', headSha: b, deployedSha: b });
    assert.deepEqual(reporter.reports.at(-1)!.writes, ['comment:update', 'deployment-status:inactive']);
  });

  it('fails on demand, recording the call, and recovers', async () => {
    const reporter = new RecordingReporter();
    const report = session(reporter);
    reporter.failNext(new Error('GitHub is down'));
    await assert.rejects(report({ state: 'deploying' }), /GitHub is down/);
    await report({ state: 'deploying' });
    assert.equal(reporter.reports.length, 2);
    assert.ok(reporter.reports[0]!.error instanceof Error);
    assert.deepEqual(reporter.reports[1]!.writes.slice(0, 1), ['comment:create']);
    assert.equal((await reporter.waitForState(repository, 3, 'deploying', 1000)).input.state, 'deploying');
  });
});
