// GitHub's rules for a well-behaved integration, per credential, applied as
// @octokit/plugin-throttling 11 applies them: at most 10 requests in flight (an App's token
// requests one at a time); writes (every method but GET and HEAD) and GraphQL queries start at
// least 1 s apart, writes that notify people (comments, issues, reviews, …) 3 s apart, searches
// 2 s apart. A request refused for a rate limit is sent again if the handler agrees: after a
// 403 or 429 with retry-after once it has passed (whatever the message says), after a secondary
// limit or a 429 without it a minute later, after the primary limit once it has reset. In place
// of that plugin, whose Bottleneck scheduling cost every request ~12 ms of latency and ~2 ms of
// CPU on this project's machines, reads included.
// Differences: while GitHub has paused the credential (the rate-limit guard, applied inside this
// plugin) no request takes a turn, so writes queued meanwhile keep their spacing after the
// pause instead of leaving together when it ends; and a retry waits for its turn and a slot like
// any request, where the plugin let it pass the requests already waiting.
import { setTimeout as sleep } from 'node:timers/promises';
import { Semaphore } from '../kube/semaphore.js';
import { GitHubRateLimitedError, requestedWait, type OctokitPlugin, type RateLimitPause } from './octokit-rate-limit.js';

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
  /** Least time between the starts of two writes (default 1,000 ms, GitHub's rule). */
  writeIntervalMs?: number;
  /** … of two writes that notify people (default 3,000 ms). */
  notificationIntervalMs?: number;
  /** … of two searches (default 2,000 ms). */
  searchIntervalMs?: number;
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
  `^(?:${notifyingRoutes
    .map(
      (route) =>
        `(?:${route
          .split('/')
          .map((part) => (part.startsWith('{') ? '(?:.+?)' : part))
          .join('/')})`,
    )
    .join('|')})[^/]*$`,
  'i',
);

/** Token requests of an App and OAuth apps: their own lane, one at a time, never spaced as writes. */
function isTokenRequest(method: string, pathname: string): boolean {
  return (
    (method === 'PATCH' && /^\/applications\/[^/]+\/token\/scoped$/.test(pathname)) ||
    (method === 'POST' &&
      (/^\/applications\/[^/]+\/token$/.test(pathname) ||
        /^\/app\/installations\/[^/]+\/access_tokens$/.test(pathname) ||
        pathname === '/login/oauth/access_token'))
  );
}

/**
 * Starts at least `intervalMs` apart, in the order asked for. Each turn counts from the moment
 * the previous turn really began, not from when it was due: on a busy machine a timer fires
 * late, and counting from the due time would bring the next start closer than the interval.
 * A monotonic clock: a step of the wall clock changes nothing.
 */
class StartSpacing {
  private previousStart: Promise<number> = Promise.resolve(-Infinity);

  constructor(private readonly intervalMs: number) {}

  turn(): Promise<void> {
    const start = this.previousStart.then(async (previous) => {
      const due = previous + this.intervalMs;
      // A timer may also fire a little early against this clock: wait again until the turn has come.
      for (let wait = due - performance.now(); wait > 0; wait = due - performance.now()) await sleep(Math.ceil(wait));
      return performance.now();
    });
    this.previousStart = start;
    return start.then(() => undefined);
  }
}

interface Lanes {
  requests: Semaphore;
  tokens: Semaphore;
  writes: StartSpacing;
  notifications: StartSpacing;
  searches: StartSpacing;
}

/**
 * Per id, process-wide: two clients of one credential share its limits. Never emptied: the
 * factory makes one id per credential, a handful per process.
 */
const lanesById = new Map<string, Lanes>();

function lanesFor(id: string, options: ThrottleOptions): Lanes {
  let lanes = lanesById.get(id);
  if (!lanes) {
    lanes = {
      requests: new Semaphore(10),
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

/** The wait a refusal asks for and the handler that decides on a retry; undefined when it is no rate limit. */
function rateLimitWait(
  err: unknown,
  pathname: string,
  options: ThrottleOptions,
): { seconds: number; handler: RateLimitHandler } | undefined {
  const error = err as FailedRequest;
  // Refusals GitHub sent; not the guard's own GitHubRateLimitedError (nothing was sent).
  if (!error?.response || err instanceof GitHubRateLimitedError) return undefined;
  const graphQl = pathname.startsWith('/graphql') && error.status !== 401;
  if (!graphQl && error.status !== 403 && error.status !== 429) return undefined;
  const wait = requestedWait(error);
  if (wait) return { seconds: wait.seconds, handler: wait.limit === 'primary' ? options.onRateLimit : options.onSecondaryRateLimit };
  if (!isGraphQlRateLimited(error.response.data)) return undefined;
  // One second past the reset, as GitHub asks.
  const resetMs = (Number(error.response.headers?.['x-ratelimit-reset']) || 0) * 1000;
  return { seconds: Math.max(Math.ceil((resetMs - Date.now()) / 1000) + 1, 0), handler: options.onRateLimit };
}

export const throttle: OctokitPlugin = (octokit, clientOptions) => {
  const options = (clientOptions.throttle ?? {}) as ThrottleOptions;
  if (options.enabled === false) return {};
  if (typeof options.onSecondaryRateLimit !== 'function' || typeof options.onRateLimit !== 'function') {
    throw new Error('throttle: onSecondaryRateLimit and onRateLimit handlers are required');
  }
  const lanes = lanesFor(options.id ?? 'no-id', options);
  const unitMs = options.retryAfterUnitMs ?? 1000;

  /** Seconds to wait before sending the request again, or undefined to give up. */
  const retryAfter = async (err: unknown, request: { method: string; url: string }, pathname: string, retryCount: number) => {
    const wait = rateLimitWait(err, pathname, options);
    if (!wait) return undefined;
    try {
      return (await wait.handler(wait.seconds, request, octokit, retryCount)) ? wait.seconds : undefined;
    } catch (handlerError) {
      octokit.log.warn(`a rate-limit handler failed: ${(handlerError as Error).message}`);
      return undefined;
    }
  };
  /** The guard's pause, if the guard is applied (it is inside this plugin, so it is on the client already). */
  const waitOutPause = () => (octokit as Partial<RateLimitPause>).waitOutRateLimitPause?.() ?? Promise.resolve(false);

  octokit.hook.wrap('request', async (request, requestOptions) => {
    const method = String(requestOptions.method ?? 'GET').toUpperCase();
    const pathname = new URL(String(requestOptions.url), 'http://github.test').pathname;
    const token = isTokenRequest(method, pathname);
    const write = !token && method !== 'GET' && method !== 'HEAD';
    const graphQl = pathname.startsWith('/graphql');
    const takeTurns = async () => {
      if (write || graphQl) await lanes.writes.turn();
      if (write && notifyingPath.test(pathname)) await lanes.notifications.turn();
      if (method === 'GET' && pathname.startsWith('/search/')) await lanes.searches.turn();
    };
    for (let retryCount = 0; ; retryCount++) {
      try {
        await waitOutPause();
        await takeTurns();
        // Paused while waiting for the turn: new turns once the pause is over.
        while (await waitOutPause()) await takeTurns();
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
