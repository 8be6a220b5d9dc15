// The resync's rule for untrusted pull requests. A maintainer's approval label covers the
// commit the maintainer looked at, but the REST API cannot say which commit that was:
// `labeled` issue events carry no commit id, and commit dates in the timeline are written
// by the author, so they prove nothing. Only the `labeled` (or `opened`) webhook ties the
// label to a head SHA, and the webhook records that tie as the environment it creates.
//
// So the resync takes an untrusted pull request's approval label into account only for
// the SHA (and base branch) an environment already exists at; for any other the label counts
// as absent: a new base is rendered from that base's configuration, which nobody approved.
// A label whose removal failed after a new push therefore never makes the resync deploy the
// unapproved commit: it finds no environment at that SHA and leaves (or deletes) it. The
// cost: an approval whose webhook was lost is not picked up by the resync; the maintainer
// removes and adds the label again (GitHub sends no `labeled` for a label already there).
import type { TrustPolicy } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { hasApprovalLabel, isAt, isTrusted, withoutApproval } from '../policy/trust.js';

export interface ResyncApproval {
  facts: PullRequestFacts;
  /** The label was ignored: the pull request is untrusted and no environment exists at its head SHA. */
  unconfirmed: boolean;
}

/** The facts the resync decides on, given where the existing environment (if any) is. */
export function resyncApproval(
  pr: PullRequestFacts,
  trust: TrustPolicy,
  environment: { headSha: string | undefined; baseRef: string | undefined } | undefined,
): ResyncApproval {
  if (isTrusted(pr, trust) || !hasApprovalLabel(pr, trust)) return { facts: pr, unconfirmed: false };
  const headSha = environment?.headSha;
  if (headSha !== undefined && isAt({ headSha, baseRef: environment?.baseRef }, pr)) return { facts: pr, unconfirmed: false };
  return { facts: withoutApproval(pr, trust), unconfirmed: true };
}
