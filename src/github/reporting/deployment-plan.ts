// Which GitHub Deployment writes a report needs: a pure function of the report and of what
// was written before. One Deployment per deployed SHA; its statuses follow the environment
// (in_progress → success with environment_url, or failure); the Deployment that served
// before stays active until a newer one succeeds, and everything goes inactive on teardown.
import { plainText } from '../../plain-text.js';
import type { EnvironmentReport, ReportedGitHubIds } from './reporter.js';

export type DeploymentStatusState = 'in_progress' | 'success' | 'failure' | 'inactive';

export interface DeploymentStatusWrite {
  state: DeploymentStatusState;
  description: string;
  environmentUrl?: string;
  /** Stored as `deploymentStatus` to skip an identical write next time. */
  key: string;
}

export interface DeploymentPlan {
  /** Create a Deployment for this SHA (it becomes the current one). */
  create?: { sha: string };
  /** Status for the current Deployment (after `create`, the new one). */
  status?: DeploymentStatusWrite;
  /** Other Deployments to mark inactive. */
  inactivate: number[];
  /** The serving Deployment afterwards: `current`, an id, or none. */
  serving: 'current' | number | undefined;
}

/** GitHub caps a deployment status description at 140 characters. */
export function statusDescription(text: string): string {
  const oneLine = plainText(text).replace(/\s+/g, ' ').trim();
  return oneLine.length > 140 ? `${oneLine.slice(0, 139)}…` : oneLine;
}

const short = (sha: string) => sha.slice(0, 7);

function desiredStatus(report: EnvironmentReport, sha: string): DeploymentStatusWrite | undefined {
  const make = (state: DeploymentStatusState, description: string, environmentUrl?: string): DeploymentStatusWrite => ({
    state,
    description: statusDescription(description),
    environmentUrl,
    key: `${state} ${environmentUrl ?? ''}`.trim(),
  });
  switch (report.state) {
    case 'deploying':
      return make('in_progress', `Deploying ${short(sha)}`);
    case 'ready':
      return make('success', `Preview of ${short(sha)} is ready`, report.url);
    case 'failed':
      return make('failure', report.reasons[0] ?? `Deploying ${short(sha)} failed`);
    default:
      return undefined;
  }
}

export function planDeployment(report: EnvironmentReport, known: ReportedGitHubIds): DeploymentPlan {
  const serving = known.servingDeploymentId;
  if (report.state === 'expired' || report.state === 'destroyed') {
    // Teardown: nothing of this environment serves any more.
    const ids = [...new Set([known.deploymentId, serving].filter((id): id is number => id !== undefined))];
    const inactivate = ids.filter((id) => !(id === known.deploymentId && known.deploymentStatus === 'inactive'));
    const current = known.deploymentId !== undefined && inactivate.includes(known.deploymentId);
    return {
      status: current
        ? { state: 'inactive', description: statusDescription(report.state === 'expired' ? 'Expired' : 'Destroyed'), key: 'inactive' }
        : undefined,
      inactivate: inactivate.filter((id) => id !== known.deploymentId),
      serving: undefined,
    };
  }
  // Queued or waiting for checks: the previous deployment (if any) keeps serving, untouched.
  if (report.state === 'queued' || report.state === 'waiting-for-checks') return { inactivate: [], serving };

  const sha = report.state === 'ready' ? (report.deployedSha ?? report.headSha) : report.headSha;
  const isNew = known.deploymentId === undefined || known.deploymentSha !== sha;
  const status = desiredStatus(report, sha)!;
  const write = isNew || known.deploymentStatus !== status.key ? status : undefined;
  const succeeded = status.state === 'success';
  return {
    create: isNew ? { sha } : undefined,
    status: write,
    // A new success retires the deployment that served before it.
    inactivate: succeeded && serving !== undefined && (isNew || serving !== known.deploymentId) ? [serving] : [],
    serving: succeeded ? 'current' : serving,
  };
}
