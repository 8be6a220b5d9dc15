// A `pull_request` delivery becomes exactly one write: the environment's spec applied, or
// the environment deleted. Nothing else happens before the answer; removing a revoked
// approval on GitHub is handed to the ApprovalRevoker, which works after it.
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import { revokesApproval, withoutApproval } from '../policy/trust.js';
import type { ApprovalRevoker } from './approval-revoker.js';
import type { EnvironmentStore } from './environment-store.js';
import { decide } from './pull-request-decision.js';
import { pullRequestFacts, type PullRequestFactsOptions } from './pull-request-payload.js';

/** Actions that can change whether, or with what spec, an environment exists. */
export const pullRequestActions: ReadonlySet<string> = new Set([
  'opened', 'reopened', 'synchronize', 'ready_for_review', 'converted_to_draft', 'labeled', 'unlabeled', 'edited', 'closed',
]);

export type PullRequestResult = 'upserted' | 'deleted' | 'absent' | 'ignored' | 'unused';

export interface PullRequestOutcome {
  result: PullRequestResult;
  /** The PreviewEnvironment's name, when one was written or deleted. */
  environment?: string;
  reason?: string;
  /** The approval label is being removed from the pull request (a new push from an untrusted author). */
  approvalRevoked?: boolean;
}

/** The cluster did not answer the one write within the deadline (the write may still land). */
export class WriteTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the cluster did not answer within ${timeoutMs} ms`);
    this.name = 'WriteTimeoutError';
  }
}

export interface PullRequestHandlerOptions {
  store: EnvironmentStore;
  policy: () => PolicyConfig;
  approvals: ApprovalRevoker;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** GitHub gives up on a delivery after 10 s; answer before that (default 8 s). */
  writeTimeoutMs?: number;
}

export class PullRequestEventHandler {
  private readonly writeTimeoutMs: number;

  constructor(private readonly options: PullRequestHandlerOptions) {
    this.writeTimeoutMs = options.writeTimeoutMs ?? 8000;
  }

  /** Handles one delivery; throws `PayloadError` (pull-request-payload.ts) for a payload it cannot read, the store's errors, or `WriteTimeoutError`. */
  async handle(action: string, payload: Record<string, unknown>, receivedAt = new Date()): Promise<PullRequestOutcome> {
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
        await this.withDeadline(this.options.store.upsert(decision.name, decision.spec, { deliveredAt: receivedAt }));
        return { result: 'upserted', environment: decision.name, ...extra };
      case 'delete': {
        const deleted = await this.withDeadline(this.options.store.delete(decision.name));
        const reason = approvalRevoked ? `new commits need a maintainer's approval again (label "${policy.trust.approvalLabel}")` : decision.reason;
        return { result: deleted, environment: decision.name, reason, ...extra };
      }
    }
  }

  private async withDeadline<T>(write: Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WriteTimeoutError(this.writeTimeoutMs)), this.writeTimeoutMs);
    });
    // A write that loses the race still settles later; its error is of no interest then.
    write.catch(() => {});
    try {
      return await Promise.race([write, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function hasBaseChange(payload: Record<string, unknown>): boolean {
  const changes = payload.changes;
  return typeof changes === 'object' && changes !== null && 'base' in changes;
}
