// The one decision about a pull request's environment, shared by the webhook and the resync:
// given the pull request as it is and the policy of its repository, the PreviewEnvironment
// must exist with this spec, must not exist, or the facts cannot be expressed as a spec.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { environmentEligibility, type IneligibilityRule } from '../policy/eligibility.js';
import type { EffectivePolicy } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { ttlProblem } from '../policy/budgets.js';
import { environmentName } from './pull-request-environment-name.js';

export type Decision =
  | { action: 'upsert'; name: string; spec: PreviewEnvironmentSpec }
  | { action: 'delete'; name: string; rule: IneligibilityRule; reason: string }
  | { action: 'ignore'; rule: 'invalid'; reason: string };

/**
 * An environment exists iff the pull request is open, passes the filters of its
 * repository, and is trusted or approved (see `environmentEligibility`); then its spec is
 * the pull request's current facts. Facts the CRD would reject are ignored rather than
 * written (the API server would refuse them anyway) — unless the environment must go.
 */
export function decide(pr: PullRequestFacts, policy: EffectivePolicy): Decision {
  const name = environmentName(pr.repository, pr.number);
  const eligibility = environmentEligibility(pr, policy);
  if (!eligibility.eligible) return { action: 'delete', name, rule: eligibility.rule, reason: eligibility.reason };
  const spec = environmentSpec(pr);
  const problems = specProblems(spec);
  if (problems.length > 0)
    return {
      action: 'ignore',
      rule: 'invalid',
      reason: `cannot describe the pull request as a PreviewEnvironment: ${problems.join('; ')}`,
    };
  return { action: 'upsert', name, spec };
}

export function environmentSpec(pr: PullRequestFacts): PreviewEnvironmentSpec {
  return {
    repository: { owner: pr.repository.owner, name: pr.repository.name, cloneUrl: pr.repository.cloneUrl },
    pullRequest: {
      number: pr.number,
      headSha: pr.headSha,
      headRef: pr.headRef,
      baseRef: pr.baseRef,
      author: pr.author,
      authorAssociation: pr.authorAssociation,
      // Sorted (and a set, as the CRD's list type requires): the same labels always give the same spec.
      labels: [...new Set(pr.labels)].sort(),
      draft: pr.draft,
      fork: pr.fork,
      // The API server refuses a write that would move this back (see the CRD).
      ...(pr.updatedAt !== undefined ? { updatedAt: pr.updatedAt } : {}),
    },
    // No `ttl`: the controller takes the repository's (capped by the policy) or the policy's default,
    // so that a `ttl` in `.preview/preview.yaml` applies. `spec.ttl` is left for a person to set.
  };
}

/** What the CRD's schema would reject in `spec` (its patterns and limits), empty when nothing. */
export function specProblems(spec: PreviewEnvironmentSpec): string[] {
  const problems: string[] = [];
  const { repository: r, pullRequest: p } = spec;
  if (!/^[A-Za-z0-9](-?[A-Za-z0-9])*$/.test(r.owner) || r.owner.length > 39)
    problems.push(`repository owner "${r.owner}" is not a GitHub login`);
  if (!/^[A-Za-z0-9._-]+$/.test(r.name) || r.name.length > 100)
    problems.push(`repository name "${r.name}" is not a GitHub repository name`);
  if (!/^(https|http|ssh|git|file):\/\/\S+$/.test(r.cloneUrl) || r.cloneUrl.length > 2048)
    problems.push('clone URL must be an https, http, ssh, git or file URL of at most 2048 characters');
  if (!Number.isSafeInteger(p.number) || p.number < 1) problems.push(`pull request number ${p.number} is not a positive integer`);
  if (!/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(p.headSha)) problems.push(`head SHA "${p.headSha}" is not a full lower-case commit id`);
  for (const [key, ref] of [
    ['head', p.headRef],
    ['base', p.baseRef],
  ] as const) {
    if (ref.length < 1 || ref.length > 255) problems.push(`${key} branch name must have 1 to 255 characters`);
  }
  const author = p.author ?? '';
  if (author.length > 39) problems.push(`author "${author}" is longer than 39 characters`);
  const labels = p.labels ?? [];
  if (labels.length > 100) problems.push(`more than 100 labels (${labels.length})`);
  const long = labels.find((l) => l.length > 100);
  if (long !== undefined) problems.push(`label "${long.slice(0, 20)}…" is longer than 100 characters`);
  if (spec.ttl !== undefined) {
    const ttl = ttlProblem(spec.ttl);
    if (ttl) problems.push(`ttl: ${ttl}`);
  }
  return problems;
}
