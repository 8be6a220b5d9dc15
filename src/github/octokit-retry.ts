// Retries a request GitHub failed for a reason that may pass, as @octokit/plugin-retry does:
// any failed request with a status of 400 or more — a 5xx, or a connection that failed (Octokit
// reports it as 500) — except the statuses in `doNotRetry`: client errors that would fail the
// same way again, and the rate limits, which the throttling plugin waits for. `retries` more
// attempts, (n + 1)² × 1 s after the n-th failure (1 s, 4 s, 9 s). In place of that plugin, which
// builds a Bottleneck scheduler for every request: on this project's machines that cost each
// request 5 ms of latency and 1.3 ms of CPU, retried or not.
// Only requests that are idempotent are sent again. A create (a POST) whose answer was lost may
// have been performed — a 502 from a proxy after GitHub wrote the comment — and sending it again
// would make a second one; such a create goes through createOnce (octokit-create-once.ts), which
// looks for the object before it sends the create again, with the policy this plugin publishes.
import { setTimeout as sleep } from 'node:timers/promises';
import type { OctokitPlugin } from './octokit-rate-limit.js';

export interface RetryOptions {
  enabled?: boolean;
  /** More attempts after the first (default 3). */
  retries?: number;
  /**
   * Statuses never retried (default: GitHub's client errors, 409 among them — an empty repository, a
   * conflict — and the rate limits 403 and 429).
   */
  doNotRetry?: readonly number[];
  /** The unit of the (n + 1)² wait (default 1,000 ms). */
  baseDelayMs?: number;
}

/** What the plugin adds to a client: its policy, for the creates it does not retry itself. */
export interface RetryPolicy {
  retries: number;
  /** The wait after the n-th failure (0-based). */
  delayMs(attempt: number): number;
}

const defaultDoNotRetry = [400, 401, 403, 404, 409, 410, 422, 429, 451];

/**
 * POSTs that leave GitHub as they found it when sent twice, so a lost answer may be sent again:
 * a new installation token (the first stays valid), a commit status or a Deployment's status (the
 * latest per context, per Deployment, is the state), labels added to an issue (a set).
 */
const idempotentPosts = [
  /\/app\/installations\/[^/]+\/access_tokens$/,
  /\/repos\/[^/]+\/[^/]+\/statuses\/[^/]+$/,
  /\/repos\/[^/]+\/[^/]+\/deployments\/[^/]+\/statuses$/,
  /\/repos\/[^/]+\/[^/]+\/issues\/[^/]+\/labels$/,
];

/** Whether sending the request twice is the same as sending it once (the URL may be a template or a full URL). */
export function isIdempotent(method: string, url: string): boolean {
  if (method.toUpperCase() !== 'POST') return true;
  const pathname = new URL(url, 'http://github.test').pathname;
  return idempotentPosts.some((route) => route.test(pathname));
}

/** The status of a failed request (Octokit's RequestError), or undefined for anything else. */
function failedStatus(err: unknown): number | undefined {
  const e = err as { status?: unknown; request?: unknown };
  return e && typeof e === 'object' && e.request !== undefined && typeof e.status === 'number' ? e.status : undefined;
}

/**
 * A request that may or may not have been performed: GitHub (or a proxy in front of it) answered
 * 5xx, or the connection failed before an answer came (Octokit reports it as 500). A 4xx is a
 * refusal: nothing was written.
 */
export function isOutcomeUnknown(err: unknown): boolean {
  const status = failedStatus(err);
  return status !== undefined && status >= 500;
}

export function retry(octokit: Parameters<OctokitPlugin>[0], options: Parameters<OctokitPlugin>[1]): { retryPolicy: RetryPolicy } {
  const settings = (options.retry ?? {}) as RetryOptions;
  const retries = settings.enabled === false ? 0 : (settings.retries ?? 3);
  const baseDelayMs = settings.baseDelayMs ?? 1000;
  const retryPolicy: RetryPolicy = { retries, delayMs: (attempt) => (attempt + 1) ** 2 * baseDelayMs };
  if (settings.enabled === false) return { retryPolicy };
  const doNotRetry = new Set(settings.doNotRetry ?? defaultDoNotRetry);
  octokit.hook.wrap('request', async (request, requestOptions) => {
    if (!isIdempotent(String(requestOptions.method ?? 'GET'), String(requestOptions.url))) return request(requestOptions);
    for (let attempt = 0; ; attempt++) {
      try {
        return await request(requestOptions);
      } catch (err) {
        const status = failedStatus(err);
        if (status === undefined || status < 400 || doNotRetry.has(status) || attempt >= retries) throw err;
        await sleep(retryPolicy.delayMs(attempt));
      }
    }
  });
  return { retryPolicy };
}
