// What the emulated GitHub knows: accounts, repositories, pull requests and everything
// the operator writes on them. Plain data; the routes read and change it, tests inspect it.
import type { KeyObject } from 'node:crypto';

export interface RepositoryRef {
  owner: string;
  name: string;
}

export interface Account {
  login: string;
  id: number;
  type: 'User' | 'Organization' | 'Bot';
}

export interface AppState {
  id: number;
  slug: string;
  name: string;
  owner: Account;
  /** The account the App acts as (`<slug>[bot]`). */
  bot: Account;
  publicKey: KeyObject;
  createdAt: string;
}

export interface InstallationState {
  id: number;
  app: AppState;
  account: Account;
  /** Full names (`owner/name`) of the repositories the installation may access. */
  repositories: Set<string>;
  createdAt: string;
}

export type AuthorAssociation =
  'COLLABORATOR' | 'CONTRIBUTOR' | 'FIRST_TIMER' | 'FIRST_TIME_CONTRIBUTOR' | 'MANNEQUIN' | 'MEMBER' | 'NONE' | 'OWNER';

export interface LabelState {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface PullRequestState {
  id: number;
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  locked: boolean;
  draft: boolean;
  user: Account;
  authorAssociation: AuthorAssociation;
  labels: LabelState[];
  head: { ref: string; sha: string; repo: RepositoryState };
  base: { ref: string; sha: string };
  merged: boolean;
  mergedAt: string | null;
  mergedBy: Account | null;
  mergeCommitSha: string | null;
  closedAt: string | null;
  createdAt: string;
  updatedAt: string;
  commits: number;
}

export interface IssueCommentState {
  id: number;
  issueNumber: number;
  body: string;
  user: Account;
  app: AppState | null;
  createdAt: string;
  updatedAt: string;
}

export type DeploymentStatusValue = 'error' | 'failure' | 'inactive' | 'in_progress' | 'queued' | 'pending' | 'success';

export interface DeploymentStatusState {
  id: number;
  state: DeploymentStatusValue;
  description: string;
  environment: string;
  environmentUrl: string;
  logUrl: string;
  targetUrl: string;
  creator: Account;
  app: AppState | null;
  createdAt: string;
}

export interface DeploymentState {
  id: number;
  sha: string;
  ref: string;
  task: string;
  environment: string;
  originalEnvironment: string;
  description: string | null;
  payload: Record<string, unknown> | string;
  transientEnvironment: boolean;
  productionEnvironment: boolean;
  creator: Account;
  app: AppState | null;
  createdAt: string;
  updatedAt: string;
  statuses: DeploymentStatusState[];
  /** What the client asked for, so tests can check it (GitHub does not return these). */
  autoMerge: boolean;
  requiredContexts: string[] | null;
}

export type CheckStatus = 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
export type CheckConclusion = 'action_required' | 'cancelled' | 'failure' | 'neutral' | 'success' | 'skipped' | 'stale' | 'timed_out';

export interface CheckSuiteState {
  id: number;
  headSha: string;
  headBranch: string | null;
  app: AppState;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRunState {
  id: number;
  suite: CheckSuiteState;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: string;
  completedAt: string | null;
  detailsUrl: string | null;
  externalId: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
  app: AppState;
}

export type CommitStatusValue = 'error' | 'failure' | 'pending' | 'success';

export interface CommitStatusState {
  id: number;
  sha: string;
  state: CommitStatusValue;
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: Account;
  createdAt: string;
  updatedAt: string;
}

export interface RepositoryState {
  id: number;
  owner: Account;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  /** The repository this one was forked from. */
  parent: RepositoryState | null;
  createdAt: string;
  pushedAt: string;
  labels: Map<string, LabelState>;
  pulls: Map<number, PullRequestState>;
  nextIssueNumber: number;
  comments: IssueCommentState[];
  deployments: DeploymentState[];
  checkSuites: CheckSuiteState[];
  checkRuns: CheckRunState[];
  commitStatuses: CommitStatusState[];
  /** Branch name → head SHA, for refs the emulator has been told about. */
  branches: Map<string, string>;
}

/** Who made a request, after the emulator checked the credentials. */
export type Identity =
  | { kind: 'app'; app: AppState }
  | { kind: 'installation'; installation: InstallationState; token: string }
  | { kind: 'user'; user: Account; token: string };

export function identityKey(identity: Identity): string {
  switch (identity.kind) {
    case 'app':
      return `app:${identity.app.id}`;
    case 'installation':
      return `installation:${identity.installation.id}`;
    case 'user':
      return `user:${identity.user.login}`;
  }
}

/** The account GitHub records as the author of a write. */
export function actingAccount(identity: Identity): Account {
  switch (identity.kind) {
    case 'app':
      return identity.app.bot;
    case 'installation':
      return identity.installation.app.bot;
    case 'user':
      return identity.user;
  }
}

export function actingApp(identity: Identity): AppState | null {
  return identity.kind === 'installation' ? identity.installation.app : identity.kind === 'app' ? identity.app : null;
}

/** GitHub's timestamps: seconds precision, UTC, `Z`. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
