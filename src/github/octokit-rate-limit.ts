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
    if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset) || headers['x-ratelimit-limit'] === undefined)
      return undefined;
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
  constructor(
    readonly client: string,
    readonly until: Date,
    readonly reason: string,
  ) {
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

export interface HttpError {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, unknown> };
}

/** GitHub's primary or secondary rate limit (403 or 429 saying so), as opposed to a refusal. */
export function isRateLimited(err: unknown): boolean {
  if (err instanceof GitHubRateLimitedError) return true;
  const e = err as HttpError | undefined;
  if (!e || typeof e !== 'object') return false;
  return requestedWait(e) !== undefined || (e.status === 403 && /\brate limit\b/i.test(e.message ?? ''));
}

/** GitHub's secondary rate limit in its words (older GitHub Enterprise Servers speak of abuse detection). */
const secondaryMessage = /\bsecondary rate\b|\babuse detection\b/i;

/**
 * `retry-after` in seconds from `nowMs`: delay-seconds, or an HTTP date as some proxies send it
 * (RFC 9110); undefined when absent or unreadable.
 */
export function retryAfterSeconds(value: unknown, nowMs: number): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (/^\s*\d+(?:\.\d+)?\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, Math.ceil((at - nowMs) / 1000)) : undefined;
}

/** The wait GitHub asked of a credential by refusing one of its requests, and which limit asked. */
export interface RequestedWait {
  seconds: number;
  /** `primary`: the hourly budget is used up (x-ratelimit-remaining: 0); `secondary`: any other limit. */
  limit: 'primary' | 'secondary';
  reason: string;
}

/**
 * What a 403 or 429 asks, in GitHub's order: its `retry-after`, whatever the message says (a plain
 * 429, a 403 from a proxy or an Enterprise Server); else, with `x-ratelimit-remaining: 0`, until one
 * second past the reset; else, for a secondary limit or any 429, a minute, as GitHub advises.
 * Undefined for any other refusal (a 403 for a missing permission).
 */
export function requestedWait(error: HttpError, nowMs = Date.now()): RequestedWait | undefined {
  if (error.status !== 403 && error.status !== 429) return undefined;
  const headers = error.response?.headers ?? {};
  const secondary = secondaryMessage.test(error.message ?? '');
  const exhausted = headers['x-ratelimit-remaining'] === '0';
  const limit = exhausted && !secondary ? 'primary' : 'secondary';
  const retryAfter = retryAfterSeconds(headers['retry-after'], nowMs);
  if (retryAfter !== undefined) return { seconds: retryAfter, limit, reason: `${error.status} with retry-after: ${retryAfter}` };
  if (exhausted && !secondary) {
    const resetMs = (Number(headers['x-ratelimit-reset']) || 0) * 1000;
    const seconds = Math.max(Math.ceil((resetMs - nowMs) / 1000) + 1, 0);
    return { seconds, limit, reason: 'primary rate limit exhausted (x-ratelimit-remaining: 0)' };
  }
  if (secondary || error.status === 429) {
    return { seconds: 60, limit: 'secondary', reason: `${error.status} without retry-after (a minute, as GitHub advises)` };
  }
  return undefined;
}

/** What the guard adds to a client: waiting out a pause GitHub asked for, before taking any turn. */
export interface RateLimitPause {
  /**
   * Resolves at once if the credential is not paused (false), or when the pause is over (true);
   * throws GitHubRateLimitedError if it is longer than the guard accepts.
   */
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
    let waited = false;
    // Again after each sleep: a timer may fire a little early, and the pause may have grown meanwhile.
    for (let wait = pausedUntil - Date.now(); wait > 0; wait = pausedUntil - Date.now()) {
      if (wait > guard.maxWaitSeconds * 1000) throw new GitHubRateLimitedError(guard.client, new Date(pausedUntil), pauseReason);
      await sleep(wait);
      waited = true;
    }
    return waited;
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
      // Retry-after on a 403 or 429 holds every request of the credential, whatever the message.
      const wait = requestedWait(error);
      if (wait) pause(Date.now() + wait.seconds * 1000, wait.reason);
      throw err;
    }
  });
  const added: RateLimitPause = { waitOutRateLimitPause };
  return added;
};
