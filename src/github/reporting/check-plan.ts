// The check on the PR's head SHA: a check run "preview-operator" when the operator is a
// GitHub App, a commit status with that context otherwise (check runs need an App). A pure
// function of the report and of what was written before.
import { hash as digest } from 'node:crypto';
import { renderReport } from './comment-body.js';
import { statusDescription } from './deployment-plan.js';
import type { EnvironmentReport, EnvironmentState, ReportedGitHubIds } from './reporter.js';

export const checkName = 'preview-operator';

export type CheckRunStatus = 'queued' | 'in_progress' | 'completed';
export type CheckRunConclusion = 'success' | 'failure' | 'cancelled' | 'neutral';
export type CommitStatusState = 'pending' | 'success' | 'failure' | 'error';

export interface CheckRunWrite {
  kind: 'check-run';
  /** `create` a new run on `sha`, or `update` the known one. */
  action: 'create' | 'update';
  sha: string;
  status: CheckRunStatus;
  conclusion?: CheckRunConclusion;
  title: string;
  summary: string;
  detailsUrl?: string;
  key: string;
}

export interface CommitStatusWrite {
  kind: 'commit-status';
  sha: string;
  state: CommitStatusState;
  description: string;
  targetUrl?: string;
  key: string;
}

export type CheckPlan = CheckRunWrite | CommitStatusWrite | undefined;

const titles: Record<EnvironmentState, string> = {
  queued: 'Queued',
  'waiting-for-checks': 'Waiting for checks',
  deploying: 'Deploying',
  ready: 'Ready',
  failed: 'Failed',
  expired: 'Expired',
  destroyed: 'Destroyed',
};

const hash = (text: string) => digest('sha256', text, 'hex').slice(0, 16);
const completed = (key: string | undefined) => key?.startsWith('completed/') || /^(success|failure|error)\//.test(key ?? '');

function runState(state: EnvironmentState): { status: CheckRunStatus; conclusion?: CheckRunConclusion } {
  switch (state) {
    case 'queued':
    case 'waiting-for-checks':
      return { status: 'queued' };
    case 'deploying':
      return { status: 'in_progress' };
    case 'ready':
      return { status: 'completed', conclusion: 'success' };
    case 'failed':
      return { status: 'completed', conclusion: 'failure' };
    // Gone before it finished: the run must not stay in progress forever.
    case 'expired':
      return { status: 'completed', conclusion: 'neutral' };
    case 'destroyed':
      return { status: 'completed', conclusion: 'cancelled' };
  }
}

function statusState(state: EnvironmentState): CommitStatusState {
  switch (state) {
    case 'ready':
      return 'success';
    case 'failed':
      return 'failure';
    case 'expired':
    case 'destroyed':
      return 'error';
    default:
      return 'pending';
  }
}

export function planCheck(report: EnvironmentReport, known: ReportedGitHubIds, mode: 'check-run' | 'commit-status'): CheckPlan {
  const sameSha = known.checkSha === report.headSha;
  // After teardown a check that already finished on the head SHA keeps its verdict.
  if ((report.state === 'expired' || report.state === 'destroyed') && (!sameSha || completed(known.checkState))) return undefined;
  const url = report.state === 'ready' ? report.url : undefined;

  if (mode === 'check-run') {
    const { status, conclusion } = runState(report.state);
    const summary = renderReport(report);
    const key = `${status}/${conclusion ?? ''}/${hash(`${summary}\n${url ?? ''}`)}`;
    const action = sameSha && known.checkRunId !== undefined ? 'update' : 'create';
    if (action === 'update' && known.checkState === key) return undefined;
    return {
      kind: 'check-run',
      action,
      sha: report.headSha,
      status,
      conclusion,
      title: titles[report.state],
      summary,
      detailsUrl: url,
      key,
    };
  }

  const state = statusState(report.state);
  const description = statusDescription(
    report.state === 'failed' && report.reasons[0] ? report.reasons[0] : `Preview environment: ${titles[report.state].toLowerCase()}`,
  );
  const key = `${state}/${hash(`${description}\n${url ?? ''}`)}`;
  if (sameSha && known.checkState === key) return undefined;
  return { kind: 'commit-status', sha: report.headSha, state, description, targetUrl: url, key };
}
