import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { planDeployment, statusDescription } from './deployment-plan.js';
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

describe('planDeployment', () => {
  it('creates nothing while queued or waiting for checks', () => {
    assert.deepEqual(planDeployment(report({ state: 'queued' }), {}), { inactivate: [], serving: undefined });
    assert.deepEqual(planDeployment(report({ state: 'waiting-for-checks' }), { servingDeploymentId: 5 }), { inactivate: [], serving: 5 });
  });

  it('creates a Deployment for the head SHA when deploying starts, in progress', () => {
    const plan = planDeployment(report({ state: 'deploying' }), {});
    assert.deepEqual(plan.create, { sha: a });
    assert.equal(plan.status?.state, 'in_progress');
    assert.equal(plan.status?.environmentUrl, undefined);
    assert.deepEqual(plan.inactivate, []);
  });

  it('marks it successful with the URL once ready, and then has nothing to do', () => {
    const known: ReportedGitHubIds = { deploymentId: 10, deploymentSha: a, deploymentStatus: 'in_progress' };
    const plan = planDeployment(report({ state: 'ready', url, deployedSha: a }), known);
    assert.equal(plan.create, undefined);
    assert.deepEqual([plan.status?.state, plan.status?.environmentUrl, plan.serving], ['success', url, 'current']);
    const after: ReportedGitHubIds = { ...known, deploymentStatus: plan.status!.key, servingDeploymentId: 10 };
    assert.deepEqual(planDeployment(report({ state: 'ready', url, deployedSha: a }), after), {
      create: undefined,
      status: undefined,
      inactivate: [],
      serving: 'current',
    });
  });

  it('keeps the serving Deployment while a new SHA deploys, and retires it when the new one succeeds', () => {
    const serving: ReportedGitHubIds = { deploymentId: 10, deploymentSha: a, deploymentStatus: `success ${url}`, servingDeploymentId: 10 };
    const deploying = planDeployment(report({ state: 'deploying', headSha: b, deployedSha: a }), serving);
    assert.deepEqual(deploying.create, { sha: b });
    assert.deepEqual(deploying.inactivate, []);
    assert.equal(deploying.serving, 10);
    const inProgress: ReportedGitHubIds = { ...serving, deploymentId: 11, deploymentSha: b, deploymentStatus: 'in_progress' };
    const ready = planDeployment(report({ state: 'ready', headSha: b, deployedSha: b, url }), inProgress);
    assert.deepEqual([ready.create, ready.status?.state, ready.inactivate, ready.serving], [undefined, 'success', [10], 'current']);
  });

  it('deploys the deployed SHA when ready, even if the head moved on', () => {
    assert.deepEqual(planDeployment(report({ state: 'ready', headSha: b, deployedSha: a, url }), {}).create, { sha: a });
  });

  it('keeps the serving Deployment active when the new SHA fails, with the first reason as description', () => {
    const serving: ReportedGitHubIds = { deploymentId: 10, deploymentSha: a, deploymentStatus: `success ${url}`, servingDeploymentId: 10 };
    const plan = planDeployment(report({ state: 'failed', headSha: b, reasons: ['bad config at /x', 'second'] }), serving);
    assert.deepEqual(
      [plan.create, plan.status?.state, plan.status?.description, plan.inactivate, plan.serving],
      [{ sha: b }, 'failure', 'bad config at /x', [], 10],
    );
  });

  it('retires the current and the serving Deployment on teardown, once', () => {
    const known: ReportedGitHubIds = { deploymentId: 11, deploymentSha: b, deploymentStatus: 'failure', servingDeploymentId: 10 };
    const plan = planDeployment(report({ state: 'destroyed', headSha: b }), known);
    assert.deepEqual([plan.status?.state, plan.inactivate, plan.serving], ['inactive', [10], undefined]);
    const after: ReportedGitHubIds = { ...known, deploymentStatus: 'inactive', servingDeploymentId: undefined };
    assert.deepEqual(planDeployment(report({ state: 'expired', headSha: b }), after), {
      status: undefined,
      inactivate: [],
      serving: undefined,
    });
    assert.deepEqual(planDeployment(report({ state: 'destroyed' }), {}), { status: undefined, inactivate: [], serving: undefined });
  });

  it("keeps descriptions within GitHub's 140 characters, on one line", () => {
    const long = statusDescription(`line one\n${'x'.repeat(300)}`);
    assert.equal(long.length, 140);
    assert.ok(!long.includes('\n'));
    assert.ok(long.endsWith('…'));
  });

  it('drops the controls a description could be made to read otherwise with (bidirectional overrides, escapes)', () => {
    assert.equal(statusDescription('\u202edeliaf skcehc\u202c \u001b[8m'), 'deliaf skcehc [8m');
  });
});
