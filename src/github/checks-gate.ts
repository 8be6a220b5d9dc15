// The wait-for-CI gate: before the PreviewEnvironment controller deploys a new head SHA it
// asks whether the repository's required checks passed on it. Until they have, the
// previous SHA keeps serving and the environment's status says WaitingForChecks.
//
// How the controller uses it (the lead wires it):
//   const verdict = await gate.state(repository, spec.pullRequest.headSha);
//   'passed'  → deploy the SHA as usual.
//   'pending' → do not deploy; keep the deployed SHA; condition ChecksPassed=False,
//               reason WaitingForChecks, message verdict.message; requeue (e.g. 30 s).
//   'failed'  → do not deploy; keep the deployed SHA; condition ChecksPassed=False,
//               reason ChecksFailed, message verdict.message (names the failing checks);
//               requeue slowly: a re-run can still turn it green.
//   throws    → a GitHub error (after the client's retries) or GitHubRateLimitedError:
//               treat as transient (requeue with backoff), never as passed.
// A repository without a requirement answers 'passed' without a request.
// Every GET is conditional (ETag): polling an unchanged commit costs no rate limit.
import {
  checksVerdict,
  type CheckRunFact,
  type CheckSuiteFact,
  type ChecksRequirement,
  type ChecksVerdict,
  type CommitChecks,
  type CommitStatusFact,
} from './checks-verdict.js';
import type { GitHubClient, GitHubClients, RepositoryName } from './octokit-factory.js';

export type { ChecksRequirement, ChecksState, ChecksVerdict } from './checks-verdict.js';

export interface ChecksGate {
  /** The verdict on `sha` of `repository` under the repository's requirement. */
  state(repository: RepositoryName, sha: string): Promise<ChecksVerdict>;
}

export interface ChecksGateOptions {
  clients: GitHubClients;
  /** The requirement of a repository (e.g. from the policy configuration); default none. */
  requirement: (repository: RepositoryName) => ChecksRequirement;
  /**
   * Check-run names and status contexts the operator reports itself, never waited for
   * (default `preview-operator`, the reporter's check run / commit status).
   */
  ownChecks?: string[];
}

export function createChecksGate(options: ChecksGateOptions): ChecksGate {
  const ownChecks = options.ownChecks ?? ['preview-operator'];
  return {
    async state(repository, sha) {
      const requirement = options.requirement(repository);
      if (requirement.mode === 'none' || (requirement.mode === 'named' && requirement.checks.length === 0)) {
        return checksVerdict({ mode: 'none' }, { runs: [], suites: [], statuses: [] });
      }
      const client = await options.clients.forRepository(repository);
      const facts = await commitChecks(client, repository, sha, requirement.mode === 'all');
      return checksVerdict(requirement, facts, ownChecks);
    },
  };
}

type Page = { data: unknown };

/** The fields read of a check run, a check suite or a commit status (GitHub's answers carry more). */
interface GitHubItem {
  id?: unknown;
  name?: unknown;
  context?: unknown;
  state?: unknown;
  status?: string | null;
  conclusion?: string | null;
  latest_check_runs_count?: number;
  check_suite?: { id?: number } | null;
  app?: { slug?: string } | null;
}

/** Items of a paginated answer: a plain list, or the list under `key` (`{ total_count, check_runs }`). */
function itemsOf(page: Page, key: string): GitHubItem[] {
  const data = page.data as unknown;
  if (Array.isArray(data)) return data as GitHubItem[];
  const list = (data as Record<string, unknown> | null)?.[key];
  return Array.isArray(list) ? (list as GitHubItem[]) : [];
}

/** What GitHub reports on the commit: check runs (latest attempt of each), suites when asked, commit statuses. */
export async function commitChecks(
  client: GitHubClient,
  repository: RepositoryName,
  sha: string,
  withSuites: boolean,
): Promise<CommitChecks> {
  const repo = { owner: repository.owner, repo: repository.name, ref: sha, per_page: 100 };
  const runs: CheckRunFact[] = [];
  for await (const page of client.paginate.iterator(client.rest.checks.listForRef, { ...repo, filter: 'latest' })) {
    for (const r of itemsOf(page, 'check_runs')) {
      runs.push({
        name: String(r.name),
        status: String(r.status),
        conclusion: r.conclusion ?? null,
        suiteId: r.check_suite?.id,
        appSlug: r.app?.slug,
      });
    }
  }
  const suites: CheckSuiteFact[] = [];
  if (withSuites) {
    for await (const page of client.paginate.iterator(client.rest.checks.listSuitesForRef, repo)) {
      for (const s of itemsOf(page, 'check_suites')) {
        suites.push({
          id: Number(s.id),
          status: s.status ?? null,
          conclusion: s.conclusion ?? null,
          latestCheckRunsCount: Number(s.latest_check_runs_count ?? 0),
          appSlug: s.app?.slug,
        });
      }
    }
  }
  // The combined status holds the latest status of each context; its answer is an object
  // (with `url`), which paginate leaves alone, so the statuses are read per page here.
  const statuses: CommitStatusFact[] = [];
  for await (const page of client.paginate.iterator(client.rest.repos.getCombinedStatusForRef, repo)) {
    for (const s of itemsOf(page, 'statuses')) statuses.push({ context: String(s.context), state: String(s.state) });
  }
  return { runs, suites, statuses };
}
