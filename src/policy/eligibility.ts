// Whether a pull request should have an environment. This is level-triggered: it looks
// at the pull request as it is, never at how it got there, so the webhook and the resync
// reach the same answer from the same facts.
import { filterRejection, type FilterRule } from './filters.js';
import type { EffectivePolicy } from './policy-config.js';
import type { PullRequestFacts } from './pull-request-facts.js';
import { trustRejection } from './trust.js';

export type IneligibilityRule = 'closed' | 'disabled' | FilterRule | 'trust';

export type Eligibility = { eligible: true } | { eligible: false; rule: IneligibilityRule; reason: string };

/**
 * An environment exists iff the pull request is open, its repository is enabled, it
 * passes the filters, and it is trusted or approved.
 */
export function environmentEligibility(pr: PullRequestFacts, policy: EffectivePolicy): Eligibility {
  if (pr.state !== 'open')
    return { eligible: false, rule: 'closed', reason: pr.merged ? 'the pull request was merged' : 'the pull request was closed' };
  if (!policy.enabled) return { eligible: false, rule: 'disabled', reason: `previews are not enabled for ${policy.repository}` };
  const filtered = filterRejection(pr, policy.filters);
  if (filtered) return { eligible: false, ...filtered };
  const untrusted = trustRejection(pr, policy.trust);
  if (untrusted) return { eligible: false, rule: 'trust', reason: untrusted };
  return { eligible: true };
}
