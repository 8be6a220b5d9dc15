// Whose code may run. A pull request is trusted when it comes from the repository itself
// (not a fork) and its author's association is a trusted one. Anything else runs only with
// a maintainer's approval label, and that approval covers the commit it was given on: a
// delivery at any other head SHA (a push; a reopen after commits pushed while it was closed,
// which GitHub reports with no push of its own) removes it until a maintainer gives it again.
import type { TrustPolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';

export function isTrusted(pr: PullRequestFacts, trust: TrustPolicy): boolean {
  return !pr.fork && trust.associations.includes(pr.authorAssociation);
}

export function hasApprovalLabel(pr: PullRequestFacts, trust: TrustPolicy): boolean {
  return pr.labels.some((l) => isApprovalLabel(l, trust));
}

/** Why the pull request may not run, or undefined when it is trusted or approved. */
export function trustRejection(pr: PullRequestFacts, trust: TrustPolicy): string | undefined {
  if (isTrusted(pr, trust) || hasApprovalLabel(pr, trust)) return undefined;
  const who = pr.fork ? 'pull requests from forks' : `authors associated as ${pr.authorAssociation}`;
  return `${who} need a maintainer's approval: the label "${trust.approvalLabel}"`;
}

/** What a `pull_request` delivery is: its action, for `labeled` the label it adds, and who sent it. */
export interface DeliveryAction {
  action: string;
  label?: string;
  /** The account whose action the delivery reports (`sender`): for `labeled`, who added the label. */
  sender?: { login: string; type?: string };
}

/**
 * Whether the delivery's sender can give an approval: not the pull request's author (an author
 * with triage access, or one who opens the pull request with the label through the API, would
 * approve their own code) and not a bot (an automation labelling what no one has read).
 */
export function senderMayApprove(delivery: DeliveryAction, pr: PullRequestFacts): boolean {
  const sender = delivery.sender;
  if (!sender) return false;
  return sender.login.toLowerCase() !== pr.author.toLowerCase() && sender.type !== 'Bot';
}

/** Where an approval was given: the head commit, on the base branch whose configuration renders it. */
export interface ApprovedAt {
  headSha: string;
  baseRef: string | undefined;
}

/** Whether the pull request is where the approval was given (its head commit, on its base branch). */
export function isAt(approved: ApprovedAt, pr: PullRequestFacts): boolean {
  return approved.headSha === pr.headSha && approved.baseRef === pr.baseRef;
}

/**
 * Whether an untrusted pull request's approval label holds for this delivery. A delivery that
 * gives the label (`labeled` with it, or `opened` with it), sent by a maintainer rather than the
 * author or a bot, ties it to the head SHA and base branch it carries; a push or a new base never
 * keeps it; any other delivery counts it only where it was tied to before (`approved`: the head
 * and base of the environment, or of the last upsert this process accepted).
 */
export function approvalHolds(
  delivery: DeliveryAction,
  pr: PullRequestFacts,
  trust: TrustPolicy,
  approved: ApprovedAt | undefined,
): boolean {
  // A label given now is a maintainer's approval or none: given by the author or a bot it is not one, whatever was
  // approved before (a maintainer who removed the label withdrew that).
  if (givesApproval(delivery, trust)) return senderMayApprove(delivery, pr);
  // A push always takes it away, even back to the approved commit: "every new push removes the label".
  return !movesApproval(delivery) && approved !== undefined && isAt(approved, pr);
}

/** Whether the delivery gives the approval label: `labeled` with it, or `opened` with it. */
export function givesApproval(delivery: DeliveryAction, trust: TrustPolicy): boolean {
  return delivery.action === 'opened' || (delivery.action === 'labeled' && isApprovalLabel(delivery.label, trust));
}

/** Whether the delivery takes the approval label away (`unlabeled` with it): the approval is withdrawn. */
export function withdrawsApproval(delivery: DeliveryAction, trust: TrustPolicy): boolean {
  return delivery.action === 'unlabeled' && isApprovalLabel(delivery.label, trust);
}

/** Whether `label` is the approval label (GitHub's label names are case-insensitive). */
function isApprovalLabel(label: string | undefined, trust: TrustPolicy): boolean {
  return label !== undefined && label.toLowerCase() === trust.approvalLabel.toLowerCase();
}

/**
 * A push, and a new base (the only `edited` that reaches here): an untrusted pull request is
 * rendered from its base branch's configuration, so an approval given on one base does not cover
 * the configuration of another the author retargets to.
 */
function movesApproval(delivery: DeliveryAction): boolean {
  return delivery.action === 'synchronize' || delivery.action === 'edited';
}

/**
 * Whether the delivery takes the approval away (the label is removed on GitHub): an untrusted
 * pull request carries it, it does not hold, and the head has moved — a push, a new base, a head
 * or base other than the approved one, or the label given by its author or a bot. Where no
 * approval is known (a restart, another replica, a label given a moment ago whose delivery is
 * still on its way) the label only does not count for this delivery: it may be a maintainer's
 * approval of this very commit.
 */
export function revokesApproval(
  delivery: DeliveryAction,
  pr: PullRequestFacts,
  trust: TrustPolicy,
  approved: ApprovedAt | undefined,
): boolean {
  if (isTrusted(pr, trust) || !hasApprovalLabel(pr, trust) || approvalHolds(delivery, pr, trust, approved)) return false;
  const givenByOther = givesApproval(delivery, trust) && !senderMayApprove(delivery, pr);
  return movesApproval(delivery) || givenByOther || (approved !== undefined && !isAt(approved, pr));
}

/** The pull request as it is once the approval label is removed. */
export function withoutApproval(pr: PullRequestFacts, trust: TrustPolicy): PullRequestFacts {
  return { ...pr, labels: pr.labels.filter((l) => !isApprovalLabel(l, trust)) };
}
