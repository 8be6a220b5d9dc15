// One resync pass as steps over the state they share (the summary, the queued deletions): read
// each repository's open pull requests and decide on each as it is read, ask GitHub about the
// environments the listing left out, then delete within the caps. resync.ts explains the rules.
import { isTransient } from '../kube/errors.js';
import { silentLogger, type Logger } from '../kube/logger.js';
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import type { GitHubClient, RepositoryName } from '../github/octokit-factory.js';
import { isRateLimited } from '../github/octokit-rate-limit.js';
import { environmentAnnotationKeys, environmentObject } from './environment-store.js';
import { decide, type Decision } from './pull-request-decision.js';
import { pullRequestFacts } from './pull-request-payload.js';
import type { ResyncOptions } from './resync.js';
import { resyncApproval } from './resync-approval.js';
import { carriesDesired } from './resync-spec-match.js';
import { emptySummary, finishSummary, type ResyncSummary } from './resync-summary.js';
import type { CachedEnvironment, ResyncTarget } from './resync-targets.js';

/** A repository being read: what it has, its client, and the deletions its listing supports so far. */
interface RepositoryRead extends ResyncTarget {
  fullName: string;
  client: GitHubClient;
  /** Everything this pass learns of the repository is at least as old as the listing's start. */
  observedAt: number;
  /** Deletions of this repository join the pass's only once its listing is complete. */
  deletions: DeletionCandidate[];
}

interface DeletionCandidate {
  name: string;
  repository: string;
  number: number;
  reason: string;
  /** When the facts behind it were read (the listing's start). */
  observedAt: number;
  /** The pull request's `updated_at` in those facts (none for a pull request that is gone). */
  updatedAt?: string;
}

type Upsert = Extract<Decision, { action: 'upsert' }>;

/**
 * ETags of the answers each client saw last, by URL: an answer with the same ETag came
 * from the client's ETag cache (GitHub said 304). Kept per client, as the ETag cache is.
 */
const lastEtags = new WeakMap<GitHubClient, Map<string, string>>();

export class ResyncPass {
  readonly summary: ResyncSummary;
  /** The policy as it is at the start of the pass; the whole pass decides on it. */
  readonly config: PolicyConfig;
  private readonly started = Date.now();
  private readonly logger: Logger;
  private readonly maxDeletions: number;
  private readonly deletions: DeletionCandidate[] = [];

  constructor(private readonly options: ResyncOptions) {
    this.summary = emptySummary(this.started);
    this.logger = options.logger ?? silentLogger;
    this.maxDeletions = options.maxDeletionsPerPass ?? 10;
    this.config = options.policy();
  }

  /** The repositories the credential covers (an App's installations); none, and an error in the summary, when GitHub fails. */
  async visibleRepositories(): Promise<RepositoryName[]> {
    try {
      return await this.options.clients.visibleRepositories();
    } catch (err) {
      this.fail('installations', 'list', err);
      return [];
    }
  }

  /** Reads every repository, `concurrency` at a time: upserts are written at once, deletions queued. */
  async readRepositories(targets: ResyncTarget[]): Promise<void> {
    this.summary.repositories = targets.length;
    await eachLimited(targets, this.options.concurrency ?? 4, (target) => this.readRepository(target));
  }

  /** The queued deletions in name order, within the cap; none at all after a rate limit anywhere in the pass. */
  async deleteQueued(): Promise<void> {
    this.deletions.sort((a, b) => a.name.localeCompare(b.name));
    // Deletions that failed transiently: the writer goes on with them, so they count against the cap.
    let retrying = 0;
    for (const candidate of this.deletions) {
      // A rate limit anywhere in the pass: the picture may be partial, so nothing is deleted.
      if (this.summary.rateLimited || this.summary.deleted.length + retrying >= this.maxDeletions) {
        this.summary.skippedDeletions.push(candidate.name);
      } else if (await this.delete(candidate)) {
        retrying += 1;
      }
    }
  }

  finish(): ResyncSummary {
    return finishSummary(this.summary, this.started, this.maxDeletions, this.logger);
  }

  private async readRepository(target: ResyncTarget): Promise<void> {
    const read = await this.open(target);
    if (!read) return;
    const listed = await this.listPullRequests(read);
    if (!listed) return; // Listed pull requests the decision removes wait too: nothing is deleted after a listing error.
    this.summary.listedRepositories += 1;
    for (const environment of read.environments.values()) {
      // Already being deleted: no question for GitHub, nothing to delete again.
      if (!listed.has(environment.number) && !this.alreadyDeleting(environment)) await this.confirmUnlisted(read, environment);
    }
    this.deletions.push(...read.deletions);
  }

  private async open(target: ResyncTarget): Promise<RepositoryRead | undefined> {
    const fullName = `${target.repository.owner}/${target.repository.name}`;
    try {
      const client = await this.options.clients.forRepository(target.repository);
      return { ...target, fullName, client, observedAt: Date.now(), deletions: [] };
    } catch (err) {
      this.fail(fullName, 'list', err);
      return undefined;
    }
  }

  /** The numbers of the open pull requests, each decided on as it is read; undefined when the listing is incomplete. */
  private async listPullRequests(read: RepositoryRead): Promise<Set<number> | undefined> {
    const { repository, client } = read;
    const listed = new Set<number>();
    try {
      const query = { owner: repository.owner, repo: repository.name, state: 'open', per_page: 100 } as const;
      const pages = client.paginate.iterator(client.rest.pulls.list, query);
      for await (const page of pages) {
        this.observe(client, page, true);
        for (const item of page.data) await this.readListed(read, item, listed);
      }
      return listed;
    } catch (err) {
      this.fail(read.fullName, 'list', err);
      return undefined;
    }
  }

  private async readListed(read: RepositoryRead, item: unknown, listed: Set<number>): Promise<void> {
    let facts: PullRequestFacts;
    try {
      facts = pullRequestFacts(item, { cloneUrl: this.options.cloneUrl });
    } catch (err) {
      // A pull request the operator cannot read is left as it is, environment included.
      const number = (item as { number?: unknown }).number;
      this.fail(read.fullName, 'facts', err, number as number | undefined);
      if (typeof number === 'number') listed.add(number);
      return;
    }
    if (facts.state !== 'open') return;
    listed.add(facts.number);
    this.summary.pullRequestsSeen += 1;
    await this.decideOn(read, facts, read.environments.get(facts.number));
  }

  /** Not in the listing: GitHub is asked about this pull request itself before its environment goes. */
  private async confirmUnlisted(read: RepositoryRead, environment: CachedEnvironment): Promise<void> {
    const { repository, client } = read;
    try {
      const response = await client.rest.pulls.get({ owner: repository.owner, repo: repository.name, pull_number: environment.number });
      this.observe(client, response, false);
      const facts = pullRequestFacts(response.data, { cloneUrl: this.options.cloneUrl });
      // Opened or reopened while the listing was read: decided on like a listed one.
      if (facts.state === 'open') await this.decideOn(read, facts, environment);
      else this.queueDeletion(read, environment, `the pull request was ${facts.merged ? 'merged' : 'closed'}`, facts.updatedAt);
    } catch (err) {
      if ((err as { status?: number }).status === 404) this.queueDeletion(read, environment, 'the pull request no longer exists (404)');
      else this.fail(read.fullName, 'get', err, environment.number);
    }
  }

  /** The webhook's decision, with the resync's rule for approvals: an upsert written now, a deletion queued, or nothing. */
  private async decideOn(read: RepositoryRead, pr: PullRequestFacts, existing: CachedEnvironment | undefined): Promise<void> {
    const policy = effectivePolicy(this.config, pr.repository);
    const approval = resyncApproval(pr, policy.trust, existing);
    if (approval.unconfirmed) this.summary.unconfirmedApprovals += 1;
    const decision = decide(approval.facts, policy);
    if (decision.action === 'ignore') this.summary.ignored += 1;
    else if (decision.action === 'delete') {
      if (existing) this.queueDeletion(read, existing, decision.reason, pr.updatedAt);
    } else await this.upsert(read, pr.number, decision, existing);
  }

  private async upsert(read: RepositoryRead, number: number, decision: Upsert, existing: CachedEnvironment | undefined): Promise<void> {
    if (existing && carriesDesired(existing.object, environmentObject(decision.name, decision.spec))) {
      this.summary.unchanged += 1;
      return;
    }
    if (this.deliveredSince(decision.name, read.observedAt)) {
      this.summary.superseded += 1;
      return;
    }
    try {
      const outcome = await this.options.writer.write(decision.name, { op: 'upsert', spec: decision.spec }, read.observedAt);
      if (outcome === 'superseded') this.summary.superseded += 1;
      else if (outcome === 'stale') this.summary.stale += 1;
      else (existing ? this.summary.updated : this.summary.created).push(decision.name);
    } catch (err) {
      this.fail(read.fullName, 'upsert', err, number);
    }
  }

  private queueDeletion(read: RepositoryRead, environment: CachedEnvironment, reason: string, updatedAt?: string): void {
    if (this.alreadyDeleting(environment)) return;
    read.deletions.push({
      name: environment.name,
      repository: read.fullName,
      number: environment.number,
      reason,
      observedAt: read.observedAt,
      ...(updatedAt !== undefined ? { updatedAt } : {}),
    });
  }

  /** Deletes one environment; true when it failed transiently (the writer retries it, so it counts against the cap). */
  private async delete(candidate: DeletionCandidate): Promise<boolean> {
    if (this.deliveredSince(candidate.name, candidate.observedAt)) {
      this.summary.superseded += 1;
      return false;
    }
    try {
      const intent = { op: 'delete' as const, ...(candidate.updatedAt !== undefined ? { updatedAt: candidate.updatedAt } : {}) };
      const outcome = await this.options.writer.write(candidate.name, intent, candidate.observedAt);
      if (outcome === 'superseded' || outcome === 'stale') {
        this.summary[outcome] += 1;
        return false;
      }
      if (outcome === 'deleted') this.summary.deleted.push(candidate.name);
      const { name: environment, repository, number: pullRequest, reason } = candidate;
      this.logger.info({ environment, repository, pullRequest, reason }, 'resync: environment deleted');
      return false;
    } catch (err) {
      this.fail(candidate.repository, 'delete', err, candidate.number);
      return isTransient(err);
    }
  }

  /**
   * Terminating (a deletionTimestamp, its finalizer still at work): deleting it again would change
   * nothing, and counting it would spend the pass's deletion cap on what is already going.
   */
  private alreadyDeleting(environment: CachedEnvironment): boolean {
    if (!environment.object.metadata.deletionTimestamp) return false;
    this.summary.alreadyDeleting += 1;
    return true;
  }

  /** A webhook write newer than `observedAt` has landed (this replica's or another's). */
  private deliveredSince(name: string, observedAt: number): boolean {
    const delivered = this.options.environments.get?.(name)?.metadata.annotations?.[environmentAnnotationKeys.deliveredAt];
    return delivered !== undefined && Date.parse(delivered) > observedAt;
  }

  private fail(repository: string, operation: string, err: unknown, pullRequest?: number): void {
    const rateLimited = isRateLimited(err);
    if (rateLimited) this.summary.rateLimited = true;
    const message = err instanceof Error ? err.message : String(err);
    this.summary.errors.push({ repository, ...(pullRequest !== undefined ? { pullRequest } : {}), operation, message, rateLimited });
    this.logger.warn({ repository, pullRequest, operation, err, rateLimited }, 'resync: a request to GitHub or the cluster failed');
  }

  /**
   * Counts a request, and a 304 when its ETag is the one this client saw last. Only listing pages
   * are remembered: they are asked again every pass, while a confirming GET is asked once (its pull
   * request's environment goes), so remembering it would only grow.
   */
  private observe(client: GitHubClient, response: { url: string; headers: { etag?: unknown } }, remember: boolean): void {
    this.summary.requests += 1;
    let seen = lastEtags.get(client);
    if (!seen) lastEtags.set(client, (seen = new Map()));
    const etag = response.headers.etag;
    if (typeof etag !== 'string') return;
    if (seen.get(response.url) === etag) this.summary.notModified += 1;
    if (remember) seen.set(response.url, etag);
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
