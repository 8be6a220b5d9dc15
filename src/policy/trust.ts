// Whose code may run. A pull request is trusted when it comes from the repository itself
// (not a fork) and its author's association is a trusted one. Anything else runs only with
// a maintainer's approval label, and that approval covers the commits it was given for: a
// new push removes it until a maintainer gives it again.
import type { TrustPolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';

export function isTrusted(pr: PullRequestFacts, trust: TrustPolicy): boolean {
  return !pr.fork && trust.associations.includes(pr.authorAssociation);
}

export function hasApprovalLabel(pr: PullRequestFacts, trust: TrustPolicy): boolean {
  const wanted = trust.approvalLabel.toLowerCase();
  return pr.labels.some((l) => l.toLowerCase() === wanted);
}

/** Why the pull request may not run, or undefined when it is trusted or approved. */
export function trustRejection(pr: PullRequestFacts, trust: TrustPolicy): string | undefined {
  if (isTrusted(pr, trust) || hasApprovalLabel(pr, trust)) return undefined;
  const who = pr.fork ? 'pull requests from forks' : `authors associated as ${pr.authorAssociation}`;
  return `${who} need a maintainer's approval: the label "${trust.approvalLabel}"`;
}

/**
 * Whether a `pull_request` delivery with this action takes the approval away: new commits
 * (`synchronize`) on an untrusted pull request that carries the approval label.
 */
export function revokesApproval(action: string, pr: PullRequestFacts, trust: TrustPolicy): boolean {
  return action === 'synchronize' && !isTrusted(pr, trust) && hasApprovalLabel(pr, trust);
}

/** The pull request as it is once the approval label is removed. */
export function withoutApproval(pr: PullRequestFacts, trust: TrustPolicy): PullRequestFacts {
  const label = trust.approvalLabel.toLowerCase();
  return { ...pr, labels: pr.labels.filter((l) => l.toLowerCase() !== label) };
}
