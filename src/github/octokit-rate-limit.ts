// GitHub's rate limits seen from the client: every response's x-ratelimit-* headers are
// recorded (for metrics), and a credential GitHub told to slow down stops sending — not just
// the request that was refused, every request of that credential — until the time it was given.
import { setTimeout as sleep } from 'node:timers/promises';
import { Octokit } from '@octokit/rest';

export type OctokitPlugin = Parameters<typeof Octokit.plugin>[number];

export interface RateLimitSnapshot {
  /** Which credential: `token`, `app`, or `installation:<id>`. */
  client: string;
  /** GitHub's bucket (`core`, `search`, `graphql`, …). */
  resource: string;
  limit: number;
  remaining: number;
  used: number;
  resetAt: Date;
  observedAt: Date;
}

/** The latest rate-limit state per credential and resource, with change notifications. */
export class RateLimitObserver {
  private readonly latest = new Map<string, RateLimitSnapshot>();
  private readonly listeners = new Set<(snapshot: RateLimitSnapshot) => void>();

  record(client: string, headers: Record<string, unknown>): RateLimitSnapshot | undefined {
    const limit = Number(headers['x-ratelimit-limit']);
    const remaining = Number(headers['x-ratelimit-remaining']);
    const reset = Number(headers['x-ratelimit-reset']);
    if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset) || headers['x-ratelimit-limit'] === undefined) return undefined;
    const used = Number(headers['x-ratelimit-used']);
    const snapshot: RateLimitSnapshot = {
      client,
      resource: typeof headers['x-ratelimit-resource'] === 'string' ? headers['x-ratelimit-resource'] : 'core',
      limit,
      remaining,
      used: Number.isFinite(used) ? used : limit - remaining,
      resetAt: new Date(reset * 1000),
      observedAt: new Date(),
    };
    this.latest.set(`${client}\0${snapshot.resource}`, snapshot);
    for (const listener of this.listeners) listener(snapshot);
    return snapshot;
  }

  snapshots(): RateLimitSnapshot[] {
    return [...this.latest.values()];
  }

  /** Calls `listener` on every recorded response; returns the unsubscribe function. */
  subscribe(listener: (snapshot: RateLimitSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Thrown without sending when GitHub asked this credential to wait longer than the client is willing to. */
export class GitHubRateLimitedError extends Error {
  constructor(readonly client: string, readonly until: Date, readonly reason: string) {
    super(`GitHub rate limit for ${client}: ${reason}; requests resume at ${until.toISOString()}`);
    this.name = 'GitHubRateLimitedError';
  }
}

export interface RateLimitGuardOptions {
  observer: RateLimitObserver;
  client: string;
  /** Longest pause accepted before a request; longer ones fail fast with GitHubRateLimitedError. */
  maxWaitSeconds: number;
}

interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, unknown> };
}

/** GitHub's primary or secondary rate limit (403 or 429 saying so), as opposed to a refusal. */
export function isRateLimited(err: unknown): boolean {
  if (err instanceof GitHubRateLimitedError) return true;
  const e = err as HttpError | undefined;
  if (e?.status === 429) return true;
  if (e?.status !== 403) return false;
  return e.response?.headers?.['x-ratelimit-remaining'] === '0'
    || e.response?.headers?.['retry-after'] !== undefined
    || /\brate limit\b/i.test(e.message ?? '');
}

/** GitHub's secondary rate limit (403 or 429 saying so). */
export const isSecondaryLimit = (error: HttpError) =>
  (error.status === 403 || error.status === 429) && /\bsecondary rate\b/i.test(error.message ?? '');

/** How long a secondary limit asks to wait: its retry-after, or a minute without one, as GitHub advises. */
export function secondaryLimitSeconds(headers: Record<string, unknown> | undefined): number {
  const retryAfter = Number(headers?.['retry-after']);
  return Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 60;
}

/** What the guard adds to a client: waiting out a pause GitHub asked for, before taking any turn. */
export interface RateLimitPause {
  /** Resolves at once if the credential is not paused (false), or when the pause is over (true); throws GitHubRateLimitedError if it is longer than the guard accepts. */
  waitOutRateLimitPause(): Promise<boolean>;
}

/**
 * The plugin. It must be applied before the throttling plugin, so that it sits inside it
 * and sees every attempt, retries included.
 */
export const rateLimitGuard: OctokitPlugin = (octokit, options) => {
  const guard = options.rateLimitGuard as RateLimitGuardOptions | undefined;
  if (!guard) return {};
  let pausedUntil = 0;
  let pauseReason = '';
  const pause = (until: number, reason: string) => {
    if (until > pausedUntil) {
      pausedUntil = until;
      pauseReason = reason;
    }
  };
  const observe = (headers: Record<string, unknown> | undefined) => {
    if (!headers) return;
    const snapshot = guard.observer.record(guard.client, headers);
    if (snapshot && snapshot.remaining === 0) pause(snapshot.resetAt.getTime(), 'primary rate limit exhausted (x-ratelimit-remaining: 0)');
  };

  const waitOutRateLimitPause = async (): Promise<boolean> => {
    const wait = pausedUntil - Date.now();
    if (wait <= 0) return false;
    if (wait > guard.maxWaitSeconds * 1000) throw new GitHubRateLimitedError(guard.client, new Date(pausedUntil), pauseReason);
    await sleep(wait);
    return true;
  };

  octokit.hook.wrap('request', async (request, requestOptions) => {
    await waitOutRateLimitPause();
    try {
      const response = await request(requestOptions);
      observe(response.headers as Record<string, unknown>);
      return response;
    } catch (err) {
      const error = err as HttpError;
      const headers = error.response?.headers;
      observe(headers);
      if (isSecondaryLimit(error)) pause(Date.now() + secondaryLimitSeconds(headers) * 1000, 'secondary rate limit');
      throw err;
    }
  });
  const added: RateLimitPause = { waitOutRateLimitPause };
  return added;
};
