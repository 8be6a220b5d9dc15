// GitHub's rules for a well-behaved integration, per credential, applied as
// @octokit/plugin-throttling 11 applies them: at most 10 requests in flight (an App's token
// requests one at a time); writes (every method but GET and HEAD) and GraphQL queries start at
// least 1 s apart, writes that notify people (comments, issues, reviews, …) 3 s apart, searches
// 2 s apart. A request refused for a rate limit is sent again if the handler agrees: after a
// secondary limit once its retry-after has passed (60 s without one), after the primary limit
// once it has reset. In place of that plugin, whose Bottleneck scheduling cost every request
// ~12 ms of latency and ~2 ms of CPU on this project's machines, reads included.
// One difference: a retry waits for its turn like any request, where the plugin let it pass the
// requests already waiting.
import { Semaphore } from '../git/semaphore.js';
import type { OctokitPlugin } from './octokit-rate-limit.js';

/** Told of a rate limit; true sends the request again after `retryAfterSeconds`. */
export type RateLimitHandler = (
  retryAfterSeconds: number,
  request: { method: string; url: string },
  octokit: unknown,
  retryCount: number,
) => boolean | Promise<boolean>;

export interface ThrottleOptions {
  enabled?: boolean;
  /** Clients with the same id share their limits (default `no-id`). */
  id?: string;
  onSecondaryRateLimit: RateLimitHandler;
  onRateLimit: RateLimitHandler;
  /** Requests in flight per id (default 10). */
  maxConcurrent?: number;
  /** Least time between the starts of two writes (default 1,000 ms, GitHub's rule). */
  writeIntervalMs?: number;
  /** … of two writes that notify people (default 3,000 ms). */
  notificationIntervalMs?: number;
  /** … of two searches (default 2,000 ms). */
  searchIntervalMs?: number;
  /** Wait after a secondary limit that gives no retry-after (default 60 s, GitHub's advice). */
  fallbackSecondaryRetryAfterSeconds?: number;
  /** Length of one second of retry-after (default 1,000 ms; tests shorten it). */
  retryAfterUnitMs?: number;
}

/** Writes that notify people, so GitHub spaces them further (the plugin's generated list). */
const notifyingRoutes = [
  '/orgs/{org}/invitations',
  '/orgs/{org}/invitations/{invitation_id}',
  '/orgs/{org}/teams/{team_slug}/discussions',
  '/orgs/{org}/teams/{team_slug}/discussions/{discussion_number}/comments',
  '/repos/{owner}/{repo}/collaborators/{username}',
  '/repos/{owner}/{repo}/commits/{commit_sha}/comments',
  '/repos/{owner}/{repo}/issues',
  '/repos/{owner}/{repo}/issues/{issue_number}/comments',
  '/repos/{owner}/{repo}/issues/{issue_number}/sub_issue',
  '/repos/{owner}/{repo}/issues/{issue_number}/sub_issues/priority',
  '/repos/{owner}/{repo}/pulls',
  '/repos/{owner}/{repo}/pulls/{pull_number}/comments',
  '/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies',
  '/repos/{owner}/{repo}/pulls/{pull_number}/merge',
  '/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers',
  '/repos/{owner}/{repo}/pulls/{pull_number}/reviews',
  '/repos/{owner}/{repo}/releases',
  '/teams/{team_id}/discussions',
  '/teams/{team_id}/discussions/{discussion_number}/comments',
];
const notifyingPath = new RegExp(
  `^(?:${notifyingRoutes.map((route) => `(?:${route.split('/').map((part) => (part.startsWith('{') ? '(?:.+?)' : part)).join('/')})`).join('|')})[^/]*$`,
  'i',
);

/** Token requests of an App and OAuth apps: their own lane, one at a time, never spaced as writes. */
function isTokenRequest(method: string, pathname: string): boolean {
  return (method === 'PATCH' && /^\/applications\/[^/]+\/token\/scoped$/.test(pathname))
    || (method === 'POST' && (/^\/applications\/[^/]+\/token$/.test(pathname)
      || /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname)
      || pathname === '/login/oauth/access_token'));
}

/** Starts at least `intervalMs` apart, in the order asked for. */
class StartSpacing {
  private nextStart = 0;

  constructor(private readonly intervalMs: number) {}

  turn(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.nextStart);
    this.nextStart = at + this.intervalMs;
    return at > now ? sleep(at - now) : Promise.resolve();
  }
}

interface Lanes {
  requests: Semaphore;
  tokens: Semaphore;
  writes: StartSpacing;
  notifications: StartSpacing;
  searches: StartSpacing;
}

/** Per id, process-wide: two clients of one credential share its limits. */
const lanesById = new Map<string, Lanes>();

function lanesFor(id: string, options: ThrottleOptions): Lanes {
  let lanes = lanesById.get(id);
  if (!lanes) {
    lanes = {
      requests: new Semaphore(options.maxConcurrent ?? 10),
      tokens: new Semaphore(1),
      writes: new StartSpacing(options.writeIntervalMs ?? 1000),
      notifications: new StartSpacing(options.notificationIntervalMs ?? 3000),
      searches: new StartSpacing(options.searchIntervalMs ?? 2000),
    };
    lanesById.set(id, lanes);
  }
  return lanes;
}

interface FailedRequest {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, unknown>; data?: { errors?: { type?: string }[] } };
}

const isGraphQlRateLimited = (data: unknown) =>
  ((data as { errors?: { type?: string }[] } | undefined)?.errors ?? []).some((e) => e.type === 'RATE_LIMITED');

export const throttle: OctokitPlugin = (octokit, clientOptions) => {
  const options = (clientOptions.throttle ?? {}) as ThrottleOptions;
  if (options.enabled === false) return {};
  if (typeof options.onSecondaryRateLimit !== 'function' || typeof options.onRateLimit !== 'function') {
    throw new Error('throttle: onSecondaryRateLimit and onRateLimit handlers are required');
  }
  const lanes = lanesFor(options.id ?? 'no-id', options);
  const unitMs = options.retryAfterUnitMs ?? 1000;

  /** Seconds to wait before sending the request again, or undefined to give up. */
  const retryAfter = async (err: unknown, request: { method: string; url: string }, pathname: string, retryCount: number): Promise<number | undefined> => {
    const error = err as FailedRequest;
    const graphQl = pathname.startsWith('/graphql') && error.status !== 401;
    if (!graphQl && error.status !== 403 && error.status !== 429) return undefined;
    const headers = error.response?.headers ?? {};
    let seconds: number;
    let handler: RateLimitHandler;
    if (/\bsecondary rate\b/i.test(error.message ?? '')) {
      seconds = Number(headers['retry-after']) || (options.fallbackSecondaryRetryAfterSeconds ?? 60);
      handler = options.onSecondaryRateLimit;
    } else if (headers['x-ratelimit-remaining'] === '0' || isGraphQlRateLimited(error.response?.data)) {
      // One second past the reset, as GitHub asks.
      seconds = Math.max(Math.ceil((Number(headers['x-ratelimit-reset']) * 1000 - Date.now()) / 1000) + 1, 0);
      handler = options.onRateLimit;
    } else {
      return undefined;
    }
    try {
      return (await handler(seconds, request, octokit, retryCount)) ? seconds : undefined;
    } catch (handlerError) {
      octokit.log.warn(`a rate-limit handler failed: ${(handlerError as Error).message}`);
      return undefined;
    }
  };

  octokit.hook.wrap('request', async (request, requestOptions) => {
    const method = String(requestOptions.method ?? 'GET').toUpperCase();
    const pathname = new URL(String(requestOptions.url), 'http://github.test').pathname;
    const token = isTokenRequest(method, pathname);
    const write = !token && method !== 'GET' && method !== 'HEAD';
    const graphQl = pathname.startsWith('/graphql');
    for (let retryCount = 0; ; retryCount++) {
      try {
        if (write || graphQl) await lanes.writes.turn();
        if (write && notifyingPath.test(pathname)) await lanes.notifications.turn();
        if (method === 'GET' && pathname.startsWith('/search/')) await lanes.searches.turn();
        const response = await (token ? lanes.tokens : lanes.requests).run(async () => request(requestOptions));
        if (graphQl && isGraphQlRateLimited(response.data)) {
          throw Object.assign(new Error('GraphQL Rate Limit Exceeded'), { response, data: response.data });
        }
        return response;
      } catch (err) {
        const seconds = await retryAfter(err, { method, url: String(requestOptions.url) }, pathname, retryCount);
        if (seconds === undefined) throw err;
        await sleep(seconds * unitMs);
      }
    }
  });
  return {};
};

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
