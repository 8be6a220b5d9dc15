// The contract between the PreviewEnvironment controller and whatever tells people about
// their environment. The controller calls `report` with the environment as it is now and
// the ids the previous call returned (it keeps them in the PreviewEnvironment's status);
// the GitHub implementation (reporter-github.ts) turns that into one sticky PR comment, a
// Deployment per deployed SHA and a check run (App) or commit status (token).
import type { PreviewEnvironmentGitHubIds } from '../../../constructs/api-types.js';
import type { RepositoryName } from '../octokit-factory.js';

export type { RepositoryName };

/**
 * What the environment is doing, as users see it:
 * - `queued`: waiting for a free slot (per-repository cap);
 * - `waiting-for-checks`: the head SHA waits for CI (the previous SHA keeps serving);
 * - `deploying`: the head SHA is being applied or is not ready yet;
 * - `ready`: the deployed SHA serves at `url`;
 * - `failed`: the head SHA could not be deployed (`reasons` says why);
 * - `expired`: removed after its time to live;
 * - `destroyed`: removed because the PR closed (or the environment was deleted).
 */
export type EnvironmentState = 'queued' | 'waiting-for-checks' | 'deploying' | 'ready' | 'failed' | 'expired' | 'destroyed';

export interface ResourceReadiness {
  /** e.g. `Algorithm`, `Database`, `Certificate`, `Ingress`. */
  kind: string;
  name: string;
  ready: boolean;
  /** Why it is not ready (a condition message), shown next to it. */
  message?: string;
}

/**
 * What the reporter wrote on GitHub, returned by `report` and passed back as `known` next
 * time: persisted as is in the PreviewEnvironment's `status.github`, whose type it is.
 */
export type ReportedGitHubIds = PreviewEnvironmentGitHubIds;

export interface EnvironmentReport {
  repository: RepositoryName;
  pullRequest: number;
  /** The PR's head SHA (checks are reported on it). */
  headSha: string;
  state: EnvironmentState;
  /** Where the environment serves; shown only once `ready`. */
  url?: string;
  /** The SHA the environment runs now (may lag `headSha` while deploying or waiting). */
  deployedSha?: string;
  /** Readiness of each resource of the environment, in display order. */
  resources: ResourceReadiness[];
  /** Condition messages, policy violations, configuration errors with their paths. */
  reasons: string[];
  /** What the previous report returned (from the environment's status); `{}` the first time. */
  known: ReportedGitHubIds;
}

export interface Reporter {
  /**
   * Brings GitHub in line with `input`. Idempotent: the same input with the returned ids
   * as `known` sends no request. Throws ReportError when part of it failed; its `partial`
   * holds the progress made, which must be persisted like a normal result.
   */
  report(input: EnvironmentReport): Promise<ReportedGitHubIds>;
}

export class ReportError extends Error {
  constructor(
    message: string,
    /** The ids after the parts that succeeded: persist them, then retry later. */
    readonly partial: ReportedGitHubIds,
    readonly failures: Array<{ part: 'client' | 'comment' | 'deployment' | 'check'; error: unknown }>,
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

/** The environment name of a PR's Deployments. */
export function deploymentEnvironment(pullRequest: number): string {
  return `preview/pr-${pullRequest}`;
}
