// A `pull_request` delivery becomes at most one intent: the environment's spec to apply, or
// the environment to delete, handed to the EnvironmentWriter, which writes it after the answer.
// Everything that can refuse a delivery (payload, recency, policy, decision) runs before the
// intent is queued, so a refused delivery never reaches the cluster. A delivery older than what
// the environment records is `stale` before anything else happens (no approval is revoked by a
// replay either). Removing a revoked approval on GitHub is handed to the ApprovalRevoker, which
// also works after the answer.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import type { KubeObject } from '../kube/kube-object.js';
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import type { TrustPolicy } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import {
  approvalHolds,
  givesApproval,
  hasApprovalLabel,
  isTrusted,
  revokesApproval,
  senderMayApprove,
  withdrawsApproval,
  withoutApproval,
  type ApprovedAt,
  type DeliveryAction,
} from '../policy/trust.js';
import type { ApprovalRevoker } from '../github/reporting/approval-revoker.js';
import { isOlder, newer, recordedUpdate, recordsRepository, UpdateMemory } from './environment-recency.js';
import type { EnvironmentIntent, EnvironmentWriter } from './environment-writer.js';
import { decide } from './pull-request-decision.js';
import { environmentName } from './pull-request-environment-name.js';
import { pullRequestFacts, type PullRequestFactsOptions } from './pull-request-payload.js';

/** Actions that can change whether, or with what spec, an environment exists. */
export const pullRequestActions: ReadonlySet<string> = new Set([
  'opened',
  'reopened',
  'synchronize',
  'ready_for_review',
  'converted_to_draft',
  'labeled',
  'unlabeled',
  'edited',
  'closed',
]);

/**
 * `accepted`: an intent was queued for the writer; `stale`: the delivery describes the pull
 * request as it was before what its environment records (a replay, or a late delivery), so
 * nothing is written; `ignored`/`unused`: nothing to write.
 */
export type PullRequestResult = 'accepted' | 'stale' | 'ignored' | 'unused';

export interface PullRequestOutcome {
  result: PullRequestResult;
  /** The PreviewEnvironment's name, when an intent was queued. */
  environment?: string;
  /** What the queued intent does to it. */
  op?: EnvironmentIntent['op'];
  reason?: string;
  /** The approval label is being removed from the pull request (an untrusted one at a commit the approval did not cover). */
  approvalRevoked?: boolean;
}

export interface PullRequestHandlerOptions {
  writer: EnvironmentWriter;
  policy: () => PolicyConfig;
  approvals: ApprovalRevoker;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** Told of every spec queued for writing, after the intent is queued (`run`: reads `.preview/` ahead). */
  onUpsert?: (spec: PreviewEnvironmentSpec) => void;
  /** The PreviewEnvironments as the cluster records them (`run`: the manager's informer), for `stale`. */
  environments?: { get(name: string): KubeObject | undefined };
  /** The updates this process accepted (default: a memory of its own). */
  updates?: UpdateMemory;
}

export class PullRequestEventHandler {
  private readonly updates: UpdateMemory;

  constructor(private readonly options: PullRequestHandlerOptions) {
    this.updates = options.updates ?? new UpdateMemory();
  }

  /** Handles one delivery without waiting for the cluster; throws `PayloadError` (pull-request-payload.ts) for a payload it cannot read. */
  handle(action: string, payload: Record<string, unknown>, receivedAt = new Date()): PullRequestOutcome {
    if (!pullRequestActions.has(action)) return { result: 'unused', reason: `pull_request.${action} does not affect environments` };
    // Only a retargeted base can change the decision; title and body edits cannot.
    if (action === 'edited' && !hasBaseChange(payload)) return { result: 'unused', reason: 'pull_request.edited without a base change' };

    let facts = pullRequestFacts(payload.pull_request, { cloneUrl: this.options.cloneUrl });
    const name = environmentName(facts.repository, facts.number);
    const environment = this.options.environments?.get(name);
    const recorded = newer(this.updates.newest(name), recordedUpdate(environment));
    if (isOlder(facts.updatedAt, recorded)) {
      const reason =
        `the pull request as of ${facts.updatedAt} is older than the ${recorded} already recorded` +
        ' (a replayed or late delivery): nothing changes';
      return { result: 'stale', environment: name, reason };
    }
    const policy = effectivePolicy(this.options.policy(), facts.repository);
    const delivery: DeliveryAction = { action, label: addedLabel(payload), sender: senderOf(payload) };
    const approval = this.judgeApproval(name, delivery, facts, policy.trust, environment);
    facts = approval.facts;
    const approvalRevoked = approval.outcome === 'revoked';

    const decision = decide(facts, policy);
    const extra = approvalRevoked ? { approvalRevoked } : {};
    switch (decision.action) {
      case 'ignore':
        return { result: 'ignored', reason: decision.reason, ...extra };
      case 'upsert':
        this.options.writer.submit(decision.name, { op: 'upsert', spec: decision.spec, deliveredAt: receivedAt });
        this.updates.accept(decision.name, facts.updatedAt);
        try {
          this.options.onUpsert?.(decision.spec);
        } catch {
          // A hint (reading ahead) only: the intent is queued, and the delivery stays accepted.
        }
        return { result: 'accepted', environment: decision.name, op: 'upsert', ...extra };
      case 'delete': {
        const { owner, name: repo } = facts.repository;
        const intent = { op: 'delete' as const, repository: { owner, name: repo } };
        this.options.writer.submit(decision.name, { ...intent, ...(facts.updatedAt ? { updatedAt: facts.updatedAt } : {}) });
        this.updates.accept(decision.name, facts.updatedAt);
        const label = `label "${policy.trust.approvalLabel}"`;
        const reasons = {
          revoked: revocationReason(delivery, facts, policy.trust, label),
          unconfirmed: `the ${label} is not known to be given on this commit: a maintainer removes it and adds it again`,
          none: decision.reason,
        };
        const reason = reasons[approval.outcome];
        return { result: 'accepted', environment: decision.name, op: 'delete', reason, ...extra };
      }
    }
  }
  /**
   * The facts to decide on, as far as the approval goes: an untrusted pull request's label counts
   * only where it holds (and is remembered at that head for the deliveries after it), and is
   * removed on GitHub where the head has moved past it.
   */
  private judgeApproval(
    name: string,
    delivery: DeliveryAction,
    facts: PullRequestFacts,
    trust: TrustPolicy,
    environment: KubeObject | undefined,
  ): { facts: PullRequestFacts; outcome: 'none' | 'revoked' | 'unconfirmed' } {
    if (withdrawsApproval(delivery, trust)) this.updates.revoke(name);
    if (isTrusted(facts, trust) || !hasApprovalLabel(facts, trust)) return { facts, outcome: 'none' };
    const approved = this.updates.approvedAt(name, facts.repository) ?? recordedAt(environment, facts.repository);
    if (approvalHolds(delivery, facts, trust, approved)) {
      this.updates.approve(name, facts.repository, { headSha: facts.headSha, baseRef: facts.baseRef });
      return { facts, outcome: 'none' };
    }
    const revoked = revokesApproval(delivery, facts, trust, approved);
    if (revoked) {
      this.updates.revoke(name);
      const { owner, name: repo } = facts.repository;
      this.options.approvals.revoke({ owner, repo, number: facts.number, label: trust.approvalLabel });
    }
    return { facts: withoutApproval(facts, trust), outcome: revoked ? 'revoked' : 'unconfirmed' };
  }
}

/** Why the approval label was taken away, for the answer. */
function revocationReason(delivery: DeliveryAction, facts: PullRequestFacts, trust: TrustPolicy, label: string): string {
  if (givesApproval(delivery, trust) && !senderMayApprove(delivery, facts)) {
    return `the ${label} was given by the pull request's author or a bot, not a maintainer; a maintainer adds it`;
  }
  if (delivery.action === 'edited') {
    return `the approval was given on another base branch, whose configuration this one's need not be; a maintainer approves again (${label})`;
  }
  return `the approval covers an earlier commit; this one needs a maintainer's approval again (${label})`;
}

/** Who sent a delivery (`sender`), when the payload names one. */
function senderOf(payload: Record<string, unknown>): DeliveryAction['sender'] {
  const sender = payload.sender as { login?: unknown; type?: unknown } | undefined;
  if (typeof sender?.login !== 'string') return undefined;
  return { login: sender.login, ...(typeof sender.type === 'string' ? { type: sender.type } : {}) };
}

/** The label a `labeled` delivery adds. */
function addedLabel(payload: Record<string, unknown>): string | undefined {
  const name = (payload.label as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** Where an environment object of `repository` is (head SHA and base branch), if anywhere (two repositories may map to one name). */
function recordedAt(object: KubeObject | undefined, repository: { owner: string; name: string }): ApprovedAt | undefined {
  if (!recordsRepository(object, repository)) return undefined;
  const pullRequest = (object as { spec?: { pullRequest?: { headSha?: unknown; baseRef?: unknown } } }).spec?.pullRequest;
  if (typeof pullRequest?.headSha !== 'string') return undefined;
  return { headSha: pullRequest.headSha, baseRef: typeof pullRequest.baseRef === 'string' ? pullRequest.baseRef : undefined };
}

function hasBaseChange(payload: Record<string, unknown>): boolean {
  const changes = payload.changes;
  return typeof changes === 'object' && changes !== null && 'base' in changes;
}
