// The resync: GitHub does not redeliver a webhook that failed, so every interval the leader
// lists the open pull requests of every repository that has environments or is configured,
// and repairs the difference with the same decision the webhook takes (`decide`).
//
// Reading is cheap: every GET is conditional (ETag), so an unchanged listing is a 304 that
// costs no rate limit, and an environment is written only when its spec differs from the
// cached object, so an unchanged world makes no write. Deleting is guarded: an environment
// is deleted only when the pass has (1) a complete listing of its repository without it, or
// a listed pull request the decision removes, and (2) for a pull request missing from the
// listing, its own GET saying closed (or 404); never after a listing error, an incomplete
// pagination or a rate limit anywhere in the pass; and at most `maxDeletionsPerPass` per pass.
//
// Writes go through the webhook's EnvironmentWriter, stamped with the time the repository's
// listing was read: a delivery that arrived after it (the listing is already older) wins, and
// a delivery's write still waiting for a retry loses to the newer listing. Either way the
// newest state of the pull request is what stays, not whichever write happened to come last.
// Deliveries another replica accepted are seen in the cluster: an environment whose last
// webhook write (its delivered-at annotation) is newer than the listing is left alone. A
// delivery that other replica is still writing can race the pass; the next pass repairs it, as
// it repairs what clock skew between replicas (the annotation is the receiver's time, the
// listing's the leader's) or a pull request closed after its delivery during the pass misjudges.
// Whatever the timing, a listing never moves an environment back: every write carries the pull
// request's `updated_at` from the listing (or its GET), and the store refuses one older than what
// the environment records (`stale`, see environment-recency.ts) — a listing served from an old
// cache, or read before a delivery that landed first, changes nothing.
// Resync writes queue behind the webhook's in the writer, so in a burst a pass takes longer.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { isTransient } from '../kube/errors.js';
import type { KubeObject } from '../kube/kube-object.js';
import { silentLogger, type Logger } from '../kube/logger.js';
import type { Runnable } from '../kube/manager.js';
import { effectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import type { PullRequestFacts } from '../policy/pull-request-facts.js';
import { environmentAnnotationKeys, environmentObject } from './environment-store.js';
import type { EnvironmentWriter } from './environment-writer.js';
import { repositoryKey, type GitHubClient, type GitHubClients, type RepositoryName } from '../github/octokit-factory.js';
import { isRateLimited } from '../github/octokit-rate-limit.js';
import { decide } from './pull-request-decision.js';
import { pullRequestFacts, type PullRequestFactsOptions } from './pull-request-payload.js';
import { resyncApproval } from './resync-approval.js';
import { carriesDesired } from './resync-spec-match.js';

/** The cached PreviewEnvironments (the manager's informer satisfies it). */
export interface EnvironmentCache {
  list(): readonly KubeObject[];
  /** The environment as the cache holds it now (the manager's informer: by name). */
  get?(name: string): KubeObject | undefined;
  /** Resolves once the cache holds the first full list (the runnable waits for it). */
  waitForSync?(signal?: AbortSignal): Promise<void>;
}

export interface ResyncOptions {
  clients: GitHubClients;
  /** Where the writes go: the webhook's writer, so the two are ordered (see above). */
  writer: Pick<EnvironmentWriter, 'write'>;
  environments: EnvironmentCache;
  policy: () => PolicyConfig;
  cloneUrl?: PullRequestFactsOptions['cloneUrl'];
  /** Deletions per pass; the rest wait for the next pass and the cap is reported (default 10). */
  maxDeletionsPerPass?: number;
  /** Repositories read at the same time (default 4; GitHub allows 100 concurrent requests per credential). */
  concurrency?: number;
  logger?: Logger;
}

export interface ResyncError {
  repository: string;
  pullRequest?: number;
  /** `list`, `get`, `facts`, `upsert`, `delete`. */
  operation: string;
  message: string;
  rateLimited: boolean;
}

export interface ResyncSummary {
  startedAt: string;
  durationMs: number;
  /** Repositories with environments or configured. */
  repositories: number;
  /** Repositories whose open pull requests were listed completely. */
  listedRepositories: number;
  /** Open pull requests seen in the listings. */
  pullRequestsSeen: number;
  /** GitHub requests the pass sent (each page and each confirming GET). */
  requests: number;
  /** Of those, answers unchanged since this client last asked: 304s, which cost no rate limit. */
  notModified: number;
  created: string[];
  updated: string[];
  deleted: string[];
  /** Environments already as the decision wants them. */
  unchanged: number;
  /** Writes dropped because a webhook delivery newer than the listing asked for another. */
  superseded: number;
  /** Writes refused because the environment records a newer update of the pull request than the listing. */
  stale: number;
  /** Pull requests the decision ignores (facts the CRD cannot express). */
  ignored: number;
  /** Untrusted pull requests whose approval label was not taken into account (see resync-approval.ts). */
  unconfirmedApprovals: number;
  /** Deletions decided but not done: over the cap, or held back because of a rate limit. */
  skippedDeletions: string[];
  deletionCapReached: boolean;
  rateLimited: boolean;
  errors: ResyncError[];
  /** One line for a log or an Event: what the pass did and anything an operator should know. */
  message: string;
}

interface CachedEnvironment {
  name: string;
  number: number;
  headSha: string | undefined;
  object: KubeObject;
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

/**
 * ETags of the answers each client saw last, by URL: an answer with the same ETag came
 * from the client's ETag cache (GitHub said 304). Kept per client, as the ETag cache is.
 */
const lastEtags = new WeakMap<GitHubClient, Map<string, string>>();

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The environments of the cache, by repository, with what the resync needs of each. */
function cachedEnvironments(cache: EnvironmentCache): Map<string, { repository: RepositoryName; byNumber: Map<number, CachedEnvironment> }> {
  const byRepository = new Map<string, { repository: RepositoryName; byNumber: Map<number, CachedEnvironment> }>();
  for (const object of cache.list()) {
    const spec = (object as KubeObject & { spec?: Partial<PreviewEnvironmentSpec> }).spec;
    const owner = spec?.repository?.owner;
    const name = spec?.repository?.name;
    const number = spec?.pullRequest?.number;
    if (typeof owner !== 'string' || typeof name !== 'string' || typeof number !== 'number' || !object.metadata?.name) continue;
    const key = repositoryKey({ owner, name });
    let entry = byRepository.get(key);
    if (!entry) {
      entry = { repository: { owner, name }, byNumber: new Map() };
      byRepository.set(key, entry);
    }
    entry.byNumber.set(number, { name: object.metadata.name, number, headSha: spec?.pullRequest?.headSha, object });
  }
  return byRepository;
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

/** One resync pass. Never throws for GitHub or cluster errors: they are in the summary. */
export async function resyncOnce(options: ResyncOptions): Promise<ResyncSummary> {
  const started = Date.now();
  const logger = options.logger ?? silentLogger;
  const maxDeletions = options.maxDeletionsPerPass ?? 10;
  const config = options.policy();
  const summary: ResyncSummary = {
    startedAt: new Date(started).toISOString(), durationMs: 0, repositories: 0, listedRepositories: 0, pullRequestsSeen: 0,
    requests: 0, notModified: 0, created: [], updated: [], deleted: [], unchanged: 0, superseded: 0, stale: 0, ignored: 0,
    unconfirmedApprovals: 0,
    skippedDeletions: [], deletionCapReached: false, rateLimited: false, errors: [], message: '',
  };

  const cached = cachedEnvironments(options.environments);
  const repositories = new Map<string, RepositoryName>();
  for (const [key, entry] of cached) repositories.set(key, entry.repository);
  for (const fullName of Object.keys(config.repositories)) {
    const [owner, name, ...rest] = fullName.split('/');
    if (!owner || !name || rest.length > 0) continue;
    if (!repositories.has(repositoryKey({ owner, name }))) repositories.set(repositoryKey({ owner, name }), { owner, name });
  }
  summary.repositories = repositories.size;
  const deletions: DeletionCandidate[] = [];

  const fail = (repository: string, operation: string, err: unknown, pullRequest?: number) => {
    const rateLimited = isRateLimited(err);
    if (rateLimited) summary.rateLimited = true;
    summary.errors.push({ repository, ...(pullRequest !== undefined ? { pullRequest } : {}), operation, message: errorMessage(err), rateLimited });
    logger.warn({ repository, pullRequest, operation, err, rateLimited }, 'resync: a request to GitHub or the cluster failed');
  };

  // Only listing pages are remembered: they are asked again every pass, while a confirming
  // GET is asked once (its pull request's environment goes), so remembering it would only grow.
  const observe = (client: GitHubClient, response: { url: string; headers: Record<string, unknown> }, remember: boolean) => {
    summary.requests += 1;
    let seen = lastEtags.get(client);
    if (!seen) lastEtags.set(client, (seen = new Map()));
    const etag = response.headers.etag;
    if (typeof etag !== 'string') return;
    if (seen.get(response.url) === etag) summary.notModified += 1;
    if (remember) seen.set(response.url, etag);
  };

  /** A webhook write newer than `observedAt` has landed (this replica's or another's). */
  function deliveredSince(name: string, observedAt: number): boolean {
    const delivered = options.environments.get?.(name)?.metadata.annotations?.[environmentAnnotationKeys.deliveredAt];
    return delivered !== undefined && Date.parse(delivered) > observedAt;
  }

  async function apply(pr: PullRequestFacts, existing: CachedEnvironment | undefined, fullName: string, deletions: DeletionCandidate[], observedAt: number): Promise<void> {
    const policy = effectivePolicy(config, pr.repository);
    const approval = resyncApproval(pr, policy.trust, existing?.headSha);
    if (approval.unconfirmed) summary.unconfirmedApprovals += 1;
    const decision = decide(approval.facts, policy);
    if (decision.action === 'ignore') {
      summary.ignored += 1;
      return;
    }
    if (decision.action === 'delete') {
      if (existing) {
        deletions.push({ name: existing.name, repository: fullName, number: pr.number, reason: decision.reason, observedAt, updatedAt: pr.updatedAt });
      }
      return;
    }
    if (existing && carriesDesired(existing.object, environmentObject(decision.name, decision.spec))) {
      summary.unchanged += 1;
      return;
    }
    if (deliveredSince(decision.name, observedAt)) {
      summary.superseded += 1;
      return;
    }
    try {
      const outcome = await options.writer.write(decision.name, { op: 'upsert', spec: decision.spec }, observedAt);
      if (outcome === 'superseded') summary.superseded += 1;
      else if (outcome === 'stale') summary.stale += 1;
      else (existing ? summary.updated : summary.created).push(decision.name);
    } catch (err) {
      fail(fullName, 'upsert', err, pr.number);
    }
  }

  async function resyncRepository(repository: RepositoryName): Promise<void> {
    const fullName = `${repository.owner}/${repository.name}`;
    const environments = cached.get(repositoryKey(repository))?.byNumber ?? new Map<number, CachedEnvironment>();
    let client: GitHubClient;
    try {
      client = await options.clients.forRepository(repository);
    } catch (err) {
      fail(fullName, 'list', err);
      return;
    }
    const listed = new Set<number>();
    // Deletions of this repository join the pass's only once its listing is complete.
    const candidates: DeletionCandidate[] = [];
    let complete = true;
    // Everything this pass learns of the repository is at least as old as the listing's start.
    const observedAt = Date.now();
    try {
      const pages = client.paginate.iterator(client.rest.pulls.list, { owner: repository.owner, repo: repository.name, state: 'open', per_page: 100 });
      for await (const page of pages) {
        observe(client, page as unknown as { url: string; headers: Record<string, unknown> }, true);
        for (const item of page.data) {
          let facts: PullRequestFacts;
          try {
            facts = pullRequestFacts(item, { cloneUrl: options.cloneUrl });
          } catch (err) {
            // A pull request the operator cannot read is left as it is, environment included.
            fail(fullName, 'facts', err, (item as { number?: number }).number);
            if (typeof (item as { number?: number }).number === 'number') listed.add((item as { number: number }).number);
            continue;
          }
          if (facts.state !== 'open') continue;
          listed.add(facts.number);
          summary.pullRequestsSeen += 1;
          await apply(facts, environments.get(facts.number), fullName, candidates, observedAt);
        }
      }
    } catch (err) {
      complete = false;
      fail(fullName, 'list', err);
    }
    if (!complete) return; // Listed pull requests the decision removes wait too: nothing is deleted after a listing error.
    summary.listedRepositories += 1;

    for (const environment of environments.values()) {
      if (listed.has(environment.number)) continue;
      // Not in the listing: ask GitHub about this pull request itself before anything goes.
      try {
        const response = await client.rest.pulls.get({ owner: repository.owner, repo: repository.name, pull_number: environment.number });
        observe(client, response as unknown as { url: string; headers: Record<string, unknown> }, false);
        const facts = pullRequestFacts(response.data, { cloneUrl: options.cloneUrl });
        if (facts.state === 'open') {
          // Opened or reopened while the listing was read: decide on it like a listed one.
          await apply(facts, environment, fullName, candidates, observedAt);
        } else {
          candidates.push({
            name: environment.name, repository: fullName, number: environment.number,
            reason: facts.merged ? 'the pull request was merged' : 'the pull request was closed', observedAt, updatedAt: facts.updatedAt,
          });
        }
      } catch (err) {
        if ((err as { status?: number }).status === 404) {
          candidates.push({ name: environment.name, repository: fullName, number: environment.number, reason: 'the pull request no longer exists (404)', observedAt });
        } else {
          fail(fullName, 'get', err, environment.number);
        }
      }
    }
    deletions.push(...candidates);
  }

  await eachLimited([...repositories.values()], options.concurrency ?? 4, resyncRepository);

  deletions.sort((a, b) => a.name.localeCompare(b.name));
  // Deletions that failed transiently: the writer goes on with them, so they count against the cap.
  let deletionsRetrying = 0;
  for (const candidate of deletions) {
    // A rate limit anywhere in the pass: the picture may be partial, so nothing is deleted.
    if (summary.rateLimited || summary.deleted.length + deletionsRetrying >= maxDeletions) {
      summary.skippedDeletions.push(candidate.name);
      continue;
    }
    if (deliveredSince(candidate.name, candidate.observedAt)) {
      summary.superseded += 1;
      continue;
    }
    try {
      const intent = { op: 'delete' as const, ...(candidate.updatedAt !== undefined ? { updatedAt: candidate.updatedAt } : {}) };
      const outcome = await options.writer.write(candidate.name, intent, candidate.observedAt);
      if (outcome === 'superseded' || outcome === 'stale') {
        summary[outcome] += 1;
        continue;
      }
      if (outcome === 'deleted') summary.deleted.push(candidate.name);
      logger.info({ environment: candidate.name, repository: candidate.repository, pullRequest: candidate.number, reason: candidate.reason }, 'resync: environment deleted');
    } catch (err) {
      if (isTransient(err)) deletionsRetrying += 1;
      fail(candidate.repository, 'delete', err, candidate.number);
    }
  }
  summary.deletionCapReached = !summary.rateLimited && summary.skippedDeletions.length > 0;
  summary.durationMs = Date.now() - started;
  summary.message = summaryMessage(summary, maxDeletions);
  const fields = { ...summary, created: summary.created.length, updated: summary.updated.length, deleted: summary.deleted.length, skippedDeletions: summary.skippedDeletions.length, errors: summary.errors.length };
  if (summary.deletionCapReached || summary.errors.length > 0) logger.warn(fields, summary.message);
  else logger.info(fields, summary.message);
  return summary;
}

function summaryMessage(s: ResyncSummary, maxDeletions: number): string {
  const parts = [
    `resync: ${s.listedRepositories}/${s.repositories} repositories listed, ${s.pullRequestsSeen} open pull requests, ${s.requests} requests (${s.notModified} not modified)`,
    `${s.created.length} created, ${s.updated.length} updated, ${s.deleted.length} deleted`,
  ];
  if (s.superseded > 0) parts.push(`${s.superseded} write(s) left to newer webhook deliveries`);
  if (s.stale > 0) parts.push(`${s.stale} write(s) refused: the environment records a newer update of the pull request than the listing`);
  if (s.deletionCapReached) {
    parts.push(`deletion cap reached: ${s.skippedDeletions.length} more environment(s) of closed pull requests wait for the next pass (maxDeletionsPerPass ${maxDeletions}): ${s.skippedDeletions.slice(0, 5).join(', ')}${s.skippedDeletions.length > 5 ? ', …' : ''}`);
  }
  if (s.rateLimited) parts.push(`rate limited by GitHub: ${s.skippedDeletions.length} deletion(s) held back`);
  if (s.unconfirmedApprovals > 0) parts.push(`${s.unconfirmedApprovals} untrusted pull request(s) carry an approval label not confirmed for their head commit (not deployed)`);
  if (s.errors.length > 0) parts.push(`${s.errors.length} error(s), first: ${s.errors[0]!.repository}${s.errors[0]!.pullRequest ? `#${s.errors[0]!.pullRequest}` : ''} ${s.errors[0]!.operation}: ${s.errors[0]!.message}`);
  return parts.join('; ');
}

export interface ResyncRunnableOptions extends ResyncOptions {
  /** Between the end of one pass and the start of the next (default 5 minutes). */
  intervalMs?: number;
  /** Told about every pass: metrics, or an Event when `deletionCapReached` / `rateLimited` / errors. */
  onPass?: (summary: ResyncSummary) => void | Promise<void>;
}

/**
 * The resync as a leader-only runnable for `Manager.addRunnable`: waits for the cache,
 * runs a pass at once (webhooks missed while no leader was running), then one per interval
 * until `signal` aborts.
 */
export function createResyncRunnable(options: ResyncRunnableOptions): Runnable {
  const interval = options.intervalMs ?? 5 * 60_000;
  const logger = options.logger ?? silentLogger;
  return {
    name: 'pull-request-resync',
    async start(signal) {
      try {
        await options.environments.waitForSync?.(signal);
      } catch {
        return; // aborted before the cache synced
      }
      while (!signal.aborted) {
        try {
          const summary = await resyncOnce(options);
          await options.onPass?.(summary);
        } catch (err) {
          logger.error({ err }, 'resync pass failed');
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, interval);
          function done() {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          signal.addEventListener('abort', done, { once: true });
        });
      }
    },
  };
}
