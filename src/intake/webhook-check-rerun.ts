// `check_run.rerequested` and `check_suite.rerequested`: someone pressed "Re-run" on the
// operator's check run of a commit (or "Re-run all checks"). The environments whose head is that
// commit are asked to deploy it again: their `spec.rerunRequestedAt` is set, which moves their
// generation, and the controller renders and applies the head commit anew — at once, also where
// it failed. A re-run for a commit that is no longer the head changes nothing: the head commit's
// own check run is the one to re-run. The write follows the answer, like a pull_request's.
//
// Two presses of Re-run on an unchanged check run send the same signed body (only the delivery id,
// which the signature does not cover, differs), so a captured delivery replayed under new ids reads
// as a press. What bounds it: an environment asked to re-run within the last `rerunCooldownMs` (its
// `spec.rerunRequestedAt`, as the cache has it) is not asked again; the answer is `stale`.
import type { KubeObject } from '../kube/kube-object.js';
import { silentLogger, type Logger } from '../kube/logger.js';
import { recordsRepository } from './environment-recency.js';
import { environmentName } from './pull-request-environment-name.js';
import { PayloadError } from './pull-request-payload.js';
import type { PullRequestOutcome } from './webhook-pull-request.js';

type Environment = KubeObject & {
  spec?: { repository?: { owner: string; name: string }; pullRequest?: { headSha?: string }; rerunRequestedAt?: string };
};

/** How long after a re-run of an environment another is not asked for (a double press, or a replay). */
export const rerunCooldownMs = 60_000;

export interface CheckRerunOptions {
  /** Sets `spec.rerunRequestedAt` of the environment (after the answer); a failure is logged. */
  requestRerun: (environment: string, requestedAt: string) => Promise<unknown>;
  /** The PreviewEnvironments as the cluster records them: a fork's pull request is found by its head commit. */
  environments?: { get(name: string): KubeObject | undefined; list?(): KubeObject[] };
  logger?: Logger;
}

export const rerunEvents = new Set(['check_run', 'check_suite']);

interface RerunTarget {
  repository: { owner: string; name: string };
  sha: string;
  /** Pull requests of the repository itself whose head is the commit (GitHub lists no fork's). */
  pullRequests: number[];
}

function targetOf(event: string, payload: Record<string, unknown>): RerunTarget {
  const object = payload[event] as { head_sha?: unknown; pull_requests?: { number?: unknown }[] } | undefined;
  const repository = payload.repository as { name?: unknown; owner?: { login?: unknown } } | undefined;
  const owner = repository?.owner?.login;
  const name = repository?.name;
  const sha = object?.head_sha;
  if (typeof owner !== 'string' || typeof name !== 'string' || typeof sha !== 'string' || !/^[0-9a-f]{40}$/.test(sha)) {
    throw new PayloadError(event, 'needs repository.owner.login, repository.name and a 40-hex head_sha');
  }
  const pullRequests = (object?.pull_requests ?? []).map((p) => p.number).filter((n): n is number => Number.isSafeInteger(n));
  return { repository: { owner, name }, sha, pullRequests };
}

export class CheckRerunHandler {
  private readonly logger: Logger;
  /** Re-runs this process asked for within the cooldown, by environment (ms): the cache shows them only after their write. */
  private readonly asked = new Map<string, number>();

  constructor(private readonly options: CheckRerunOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Handles one delivery without waiting for the cluster; throws `PayloadError` for a payload it cannot read. */
  handle(event: string, action: string, payload: Record<string, unknown>, receivedAt = new Date()): PullRequestOutcome {
    if (action !== 'rerequested') return { result: 'unused', reason: `${event}.${action} does not affect environments` };
    const target = targetOf(event, payload);
    const names = this.environmentsAt(target);
    const sha = target.sha.slice(0, 12);
    if (names.length === 0) {
      return { result: 'ignored', reason: `no environment has ${sha} as its head commit: nothing to re-run` };
    }
    const due = names.filter((name) => !this.reranSince(name, receivedAt.getTime() - rerunCooldownMs));
    if (due.length === 0) {
      const seconds = rerunCooldownMs / 1000;
      return { result: 'stale', environment: names[0], reason: `a re-run of ${names.join(', ')} was asked for in the last ${seconds} s` };
    }
    const requestedAt = receivedAt.toISOString();
    for (const name of due) {
      this.asked.set(name, receivedAt.getTime());
      this.options.requestRerun(name, requestedAt).catch((err: unknown) => {
        this.logger.error({ environment: name, sha: target.sha, err }, "could not ask for a re-run of the environment's deploy");
      });
    }
    return { result: 'accepted', environment: due[0], reason: `re-running the deploy of ${sha} in ${due.join(', ')}` };
  }

  /** Whether this process, or the cache (another replica, an earlier process), has a re-run of the environment after `since` (ms). */
  private reranSince(name: string, since: number): boolean {
    for (const [environment, at] of this.asked) if (at <= since) this.asked.delete(environment);
    const recorded = (this.options.environments?.get(name) as Environment | undefined)?.spec?.rerunRequestedAt;
    return this.asked.has(name) || (recorded !== undefined && Date.parse(recorded) > since);
  }

  /** The environments whose head is the commit: the payload's pull requests, and (forks) those the cache records at it. */
  private environmentsAt(target: RerunTarget): string[] {
    const { environments } = this.options;
    const named = target.pullRequests.map((n) => environmentName(target.repository, n));
    const recorded = ((environments?.list?.() ?? []) as Environment[])
      .filter((e) => recordsRepository(e, target.repository) && e.spec?.pullRequest?.headSha === target.sha)
      .map((e) => e.metadata.name!);
    const candidates = [...new Set([...named, ...recorded])];
    // Without a cache (a webhook-only process) the write itself finds out; with one, only heads at the commit.
    if (!environments) return candidates;
    return candidates.filter((name) => (environments.get(name) as Environment | undefined)?.spec?.pullRequest?.headSha === target.sha);
  }
}
