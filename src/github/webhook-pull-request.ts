// A `pull_request` delivery becomes at most one intent: the environment's spec to apply, or
// the environment to delete, handed to the EnvironmentWriter, which writes it after the answer.
// Everything that can refuse a delivery (payload, policy, decision) runs before the intent is
// queued, so a refused delivery never reaches the cluster. Removing a revoked approval on
// GitHub is handed to the ApprovalRevoker, which also works after the answer.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import { revokesApproval, withoutApproval } from '../policy/trust.js';
import type { ApprovalRevoker } from './approval-revoker.js';
import type { EnvironmentIntent, EnvironmentWriter } from './environment-writer.js';
import { decide } from './pull-request-decision.js';
import { pullRequestFacts, type PullRequestFactsOptions } from './pull-request-payload.js';

/** Actions that can change whether, or with what spec, an environment exists. */
export const pullRequestActions: ReadonlySet<string> = new Set([
  'opened', 'reopened', 'synchronize', 'ready_for_review', 'converted_to_draft', 'labeled', 'unlabeled', 'edited', 'closed',
]);

/** `accepted`: an intent was queued for the writer; `ignored`/`unused`: nothing to write. */
export type PullRequestResult = 'accepted' | 'ignored' | 'unused';

export interface PullRequestOutcome {
  result: PullRequestResult;
  /** The PreviewEnvironment's name, when an intent was queued. */
  environment?: string;
  /** What the queued intent does to it. */
  op?: EnvironmentIntent['op'];
  reason?: string;
  /** The approval label is being removed from the pull request (a new push from an untrusted author). */
  approvalRevoked?: boolean;
}

export interface PullRequestHandlerOptions {
  writer: EnvironmentWriter;
  policy: () => PolicyConfig;
  approvals: ApprovalRevoker;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** Told of every spec queued for writing, after the intent is queued (`run`: reads `.preview/` ahead). */
  onUpsert?: (spec: PreviewEnvironmentSpec) => void;
}

export class PullRequestEventHandler {
  constructor(private readonly options: PullRequestHandlerOptions) {}

  /** Handles one delivery without waiting for the cluster; throws `PayloadError` (pull-request-payload.ts) for a payload it cannot read. */
  handle(action: string, payload: Record<string, unknown>, receivedAt = new Date()): PullRequestOutcome {
    if (!pullRequestActions.has(action)) return { result: 'unused', reason: `pull_request.${action} does not affect environments` };
    // Only a retargeted base can change the decision; title and body edits cannot.
    if (action === 'edited' && !hasBaseChange(payload)) return { result: 'unused', reason: 'pull_request.edited without a base change' };

    let facts = pullRequestFacts(payload.pull_request, { cloneUrl: this.options.cloneUrl });
    const policy = effectivePolicy(this.options.policy(), facts.repository);
    const approvalRevoked = revokesApproval(action, facts, policy.trust);
    if (approvalRevoked) {
      facts = withoutApproval(facts, policy.trust);
      this.options.approvals.revoke({
        owner: facts.repository.owner, repo: facts.repository.name, number: facts.number, label: policy.trust.approvalLabel,
      });
    }

    const decision = decide(facts, policy);
    const extra = approvalRevoked ? { approvalRevoked } : {};
    switch (decision.action) {
      case 'ignore':
        return { result: 'ignored', reason: decision.reason, ...extra };
      case 'upsert':
        this.options.writer.submit(decision.name, { op: 'upsert', spec: decision.spec, deliveredAt: receivedAt });
        try {
          this.options.onUpsert?.(decision.spec);
        } catch {
          // A hint (reading ahead) only: the intent is queued, and the delivery stays accepted.
        }
        return { result: 'accepted', environment: decision.name, op: 'upsert', ...extra };
      case 'delete': {
        this.options.writer.submit(decision.name, { op: 'delete' });
        const reason = approvalRevoked ? `new commits need a maintainer's approval again (label "${policy.trust.approvalLabel}")` : decision.reason;
        return { result: 'accepted', environment: decision.name, op: 'delete', reason, ...extra };
      }
    }
  }
}

function hasBaseChange(payload: Record<string, unknown>): boolean {
  const changes = payload.changes;
  return typeof changes === 'object' && changes !== null && 'base' in changes;
}
