// Retries a request GitHub failed for a reason that may pass, as @octokit/plugin-retry does:
// any failed request with a status of 400 or more — a 5xx, or a connection that failed (Octokit
// reports it as 500) — except the statuses in `doNotRetry`: client errors that would fail the
// same way again, and the rate limits, which the throttling plugin waits for. `retries` more
// attempts, (n + 1)² × 1 s after the n-th failure (1 s, 4 s, 9 s). In place of that plugin, which
// builds a Bottleneck scheduler for every request: on this project's machines that cost each
// request 5 ms of latency and 1.3 ms of CPU, retried or not.
import { setTimeout as sleep } from 'node:timers/promises';
import type { OctokitPlugin } from './octokit-rate-limit.js';

export interface RetryOptions {
  enabled?: boolean;
  /** More attempts after the first (default 3). */
  retries?: number;
  /** Statuses never retried (default: GitHub's client errors, 409 among them — an empty repository, a conflict — and the rate limits 403 and 429). */
  doNotRetry?: readonly number[];
  /** The unit of the (n + 1)² wait (default 1,000 ms). */
  baseDelayMs?: number;
}

const defaultDoNotRetry = [400, 401, 403, 404, 409, 410, 422, 429, 451];

/** The status of a failed request (Octokit's RequestError), or undefined for anything else. */
function failedStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; request?: unknown };
  return e && typeof e === 'object' && e.request !== undefined && typeof e.status === 'number' ? e.status : undefined;
}

export const retry: OctokitPlugin = (octokit, options) => {
  const settings = (options.retry ?? {}) as RetryOptions;
  if (settings.enabled === false) return {};
  const retries = settings.retries ?? 3;
  const doNotRetry = new Set(settings.doNotRetry ?? defaultDoNotRetry);
  const baseDelayMs = settings.baseDelayMs ?? 1000;
  octokit.hook.wrap('request', async (request, requestOptions) => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(requestOptions);
      } catch (err) {
        const status = failedStatus(err);
        if (status === undefined || status < 400 || doNotRetry.has(status) || attempt >= retries) throw err;
        await sleep((attempt + 1) ** 2 * baseDelayMs);
      }
    }
  });
  return {};
};
