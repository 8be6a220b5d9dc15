import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeEnvironment, failureLines } from './watch-environment.js';

describe('the dev watch lines', () => {
  it('says whether an absent environment was never recorded or is gone', () => {
    assert.equal(describeEnvironment('pr-1', undefined, false), 'environment pr-1: not recorded yet');
    assert.equal(describeEnvironment('pr-1', undefined, true), 'environment pr-1: gone');
  });

  it('shows phase, namespace, URL and one line per resource', () => {
    const status = {
      phase: 'Deploying',
      namespace: 'ns',
      url: 'http://x.localhost',
      resources: [
        { kind: 'Ingress', name: 'web', ready: true },
        { kind: 'Database', name: 'db', ready: false, message: 'not created yet' },
      ],
    };
    assert.equal(
      describeEnvironment('pr-1', status, true),
      'environment pr-1: Deploying, namespace ns, http://x.localhost\n  Ingress/web ready\n  Database/db not ready (not created yet)',
    );
    assert.equal(describeEnvironment('pr-1', {}, true), 'environment pr-1: Pending');
  });

  it('shows the deployed commit and the one a redeploy moves to', () => {
    const head = 'b'.repeat(40);
    assert.equal(describeEnvironment('pr-1', { phase: 'Pending' }, true, head), 'environment pr-1: Pending deploying bbbbbbb');
    assert.equal(
      describeEnvironment('pr-1', { phase: 'Ready', deployedSha: 'a'.repeat(40) }, true, head),
      'environment pr-1: Ready at aaaaaaa, deploying bbbbbbb',
    );
    assert.equal(describeEnvironment('pr-1', { phase: 'Ready', deployedSha: head }, true, head), 'environment pr-1: Ready at bbbbbbb');
  });

  it('explains a failure by every condition but Ready=True', () => {
    const conditions = [
      { type: 'Ready', status: 'False', reason: 'RenderFailed', message: 'boom' },
      { type: 'Synced', status: 'True' },
    ];
    assert.deepEqual(failureLines({ phase: 'Failed', conditions }), ['  Ready=False RenderFailed: boom', '  Synced=True : ']);
  });
});
