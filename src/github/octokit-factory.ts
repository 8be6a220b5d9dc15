// Authenticated Octokit clients for the operator: as a GitHub App (one client per
// installation, the installation of each repository looked up once and cached) or with a
// token; on github.com or a GitHub Enterprise Server (base URL). Every client throttles and
// retries within GitHub's rules, records rate limits and uses conditional requests.
import { randomBytes } from 'node:crypto';
import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import type { Logger } from '../kube/logger.js';
import { silentLogger } from '../kube/logger.js';
import { githubFetch } from './github-fetch.js';
import { listInstallationRepositories } from './installation-repositories.js';
import { conditionalRequests, type ConditionalRequestStats } from './octokit-conditional-requests.js';
import { RateLimitObserver, rateLimitGuard, type RateLimitGuardOptions } from './octokit-rate-limit.js';
import { retry, type RetryPolicy } from './octokit-retry.js';
import { throttle } from './octokit-throttle.js';

/** An Octokit with the REST methods, pagination, throttling, retries and the ETag cache. */
export type GitHubClient = Octokit & { conditionalRequestStats: ConditionalRequestStats; retryPolicy: RetryPolicy };
type ClientOptions = NonNullable<ConstructorParameters<typeof Octokit>[0]>;

/** Order matters: the guard sits inside throttling/retry (sees every attempt), the ETag cache outside. */
const PreviewOctokit: new (options: ClientOptions) => GitHubClient = Octokit.plugin(rateLimitGuard, throttle, retry, conditionalRequests);

export interface RepositoryName {
  owner: string;
  name: string;
}

/** One key per repository, whatever the case GitHub or a person wrote it in (GitHub's names are case-insensitive). */
export const repositoryKey = (r: RepositoryName) => `${r.owner}/${r.name}`.toLowerCase();

export type GitHubAuth =
  | {
      type: 'app';
      appId: number | string;
      /** The App's private key (PEM, PKCS#1 as GitHub issues it, or PKCS#8). */
      privateKey: string;
      /** Skips the per-repository lookup when the App has a single installation. */
      installationId?: number;
    }
  | { type: 'token'; token: string };

export interface GitHubClientOptions {
  auth: GitHubAuth;
  /** Default `https://api.github.com`; for GitHub Enterprise Server `https://<host>/api/v3`. */
  baseUrl?: string;
  userAgent?: string;
  throttle?: {
    /** Default true. Spaces writes ≥ 1 s and content-creating writes ≥ 3 s apart per credential, as GitHub asks. */
    enabled?: boolean;
    /** Retries after a secondary rate limit (honouring retry-after). Default 2. */
    secondaryRateLimitRetries?: number;
    /** Retries after the primary limit is exhausted (waiting for its reset). Default 1. */
    rateLimitRetries?: number;
    /** Longest wait accepted before retrying; longer ones fail with the rate-limit error. Default 60. */
    maxRetryAfterSeconds?: number;
  };
  retry?: {
    /**
     * Retries of a failed request (5xx, a failed connection; not client errors or rate limits), 1, 4, 9 s apart. Default 3.
     * Creates are never sent again blindly: after a lost answer the object is looked up first (octokit-create-once.ts).
     */
    retries?: number;
    enabled?: boolean;
  };
  /** ETag cache entries per client (0 disables conditional requests). Default 500. */
  etagCacheEntries?: number;
  /** Where HTTPS_PROXY / HTTP_PROXY / NO_PROXY are read (default: the process's environment). */
  proxyEnv?: Readonly<Record<string, string | undefined>>;
  log?: Logger;
}

export interface GitHubClients {
  readonly authType: 'app' | 'token';
  /** The client for a repository (for an App: authenticated as the installation that covers it). */
  forRepository(repository: RepositoryName): Promise<GitHubClient>;
  /** The client for an installation (an App's webhook payloads name it). */
  forInstallation(installationId: number): GitHubClient;
  /** The installation id covering a repository (App only; looked up once, then cached). */
  installationIdFor(repository: RepositoryName): Promise<number>;
  /** Forgets a cached installation, e.g. after GitHub answered 404 because the App was removed. */
  forgetRepository(repository: RepositoryName): void;
  /**
   * Every repository the credential is known to cover: for an App, its installations'
   * repositories (each one's installation remembered); for a token, none (it covers what the
   * configuration names).
   */
  visibleRepositories(): Promise<RepositoryName[]>;
  /** A token for git over HTTPS (`x-access-token:<token>`), valid for at least a few minutes. */
  tokenFor(repository: RepositoryName): Promise<string>;
  /**
   * The login GitHub shows as the author of what the operator writes: `<app-slug>[bot]` for an
   * App (GET /app), the token's user otherwise (GET /user); asked once.
   */
  ownLogin(): Promise<string>;
  readonly rateLimits: RateLimitObserver;
}

/** Asks once and keeps the answer; a failure is not kept, so the next call asks again. */
function askedOnce<T>(ask: () => Promise<T>): () => Promise<T> {
  let answer: Promise<T> | undefined;
  return () =>
    (answer ??= ask().catch((err: unknown) => {
      answer = undefined;
      throw err;
    }));
}

/** Makes one Octokit client of a factory: its credential, pace, retries and conditional requests. */
type ClientMaker = (client: string, auth: Record<string, unknown>) => GitHubClient;

function octokitLogger(log: Logger) {
  return {
    debug: (message: string) => log.debug({ component: 'octokit' }, message),
    info: (message: string) => log.debug({ component: 'octokit' }, message),
    warn: (message: string) => log.warn({ component: 'octokit' }, message),
    // Failed requests are thrown to the caller, which decides whether they matter.
    error: (message: string) => log.debug({ component: 'octokit' }, message),
  };
}

type LimitHandler = (retryAfter: number, request: { method: string; url: string }, octokit: unknown, retryCount: number) => boolean;

/** Whether a rate-limited request is sent again: within `retries` and a wait GitHub asks for that we accept. */
function limitHandler(log: Logger, client: string, retries: number, maxRetryAfter: number, what: string): LimitHandler {
  return (retryAfter, request, _octokit, retryCount) => {
    const again = retryCount < retries && retryAfter <= maxRetryAfter;
    log.warn({ client, method: request.method, url: request.url, retryAfter, retryCount, retrying: again }, what);
    return again;
  };
}

function clientMaker(options: GitHubClientOptions, observer: RateLimitObserver): ClientMaker {
  const log = options.log ?? silentLogger;
  // Throttling groups are process-wide and keyed by id: one key per credential of this
  // factory, so two factories (or two installations) never share a write queue.
  const factoryId = randomBytes(4).toString('hex');
  const maxRetryAfter = options.throttle?.maxRetryAfterSeconds ?? 60;
  // Every client of this factory, the App's token exchange included, goes through this fetch (and the proxy when one is set).
  const fetch = githubFetch(options.proxyEnv ?? process.env);
  const octokitLog = octokitLogger(log);
  return (client, auth) =>
    new PreviewOctokit({
      ...auth,
      baseUrl: options.baseUrl,
      userAgent: options.userAgent ?? 'preview-operator',
      log: octokitLog,
      request: { fetch },
      rateLimitGuard: { observer, client, maxWaitSeconds: maxRetryAfter } satisfies RateLimitGuardOptions,
      conditionalRequests: { maxEntries: options.etagCacheEntries ?? 500 },
      throttle: {
        enabled: options.throttle?.enabled ?? true,
        id: `${factoryId}:${client}`,
        onSecondaryRateLimit: limitHandler(
          log,
          client,
          options.throttle?.secondaryRateLimitRetries ?? 2,
          maxRetryAfter,
          'GitHub secondary rate limit',
        ),
        onRateLimit: limitHandler(log, client, options.throttle?.rateLimitRetries ?? 1, maxRetryAfter, 'GitHub rate limit exhausted'),
      },
      retry: { enabled: options.retry?.enabled ?? true, retries: options.retry?.retries ?? 3 },
    });
}

function tokenClients(token: string, newClient: ClientMaker, observer: RateLimitObserver): GitHubClients {
  const client = newClient('token', { auth: token });
  const noInstallations = 'installations exist only when authenticated as a GitHub App';
  return {
    authType: 'token',
    forRepository: async () => client,
    forInstallation: () => {
      throw new Error(noInstallations);
    },
    installationIdFor: () => Promise.reject(new Error(noInstallations)),
    forgetRepository: () => {},
    visibleRepositories: async () => [],
    tokenFor: async () => token,
    ownLogin: askedOnce(async () => (await client.rest.users.getAuthenticated()).data.login),
    rateLimits: observer,
  };
}

type AppAuth = Extract<GitHubClientOptions['auth'], { type: 'app' }>;

/** An App's clients: one per installation, and the installation of each repository looked up once. */
class AppClients implements GitHubClients {
  readonly authType = 'app';
  private readonly appClient: GitHubClient;
  private readonly installationClients = new Map<number, GitHubClient>();
  private readonly installationIds = new Map<string, Promise<number>>();

  constructor(
    private readonly app: AppAuth,
    private readonly newClient: ClientMaker,
    readonly rateLimits: RateLimitObserver,
  ) {
    this.appClient = newClient('app', { authStrategy: createAppAuth, auth: { appId: app.appId, privateKey: app.privateKey } });
  }

  forInstallation = (installationId: number): GitHubClient => {
    let client = this.installationClients.get(installationId);
    if (!client) {
      const auth = { appId: this.app.appId, privateKey: this.app.privateKey, installationId };
      client = this.newClient(`installation:${installationId}`, { authStrategy: createAppAuth, auth });
      this.installationClients.set(installationId, client);
    }
    return client;
  };

  installationIdFor = (repository: RepositoryName): Promise<number> => {
    if (this.app.installationId !== undefined) return Promise.resolve(this.app.installationId);
    const key = repositoryKey(repository);
    let id = this.installationIds.get(key);
    if (!id) {
      id = this.appClient.rest.apps.getRepoInstallation({ owner: repository.owner, repo: repository.name }).then((r) => r.data.id);
      this.installationIds.set(key, id);
      // A failed lookup is not cached: the next call asks again.
      id.catch(() => this.installationIds.delete(key));
    }
    return id;
  };

  forRepository = async (repository: RepositoryName): Promise<GitHubClient> =>
    this.forInstallation(await this.installationIdFor(repository));

  forgetRepository = (repository: RepositoryName): void => void this.installationIds.delete(repositoryKey(repository));

  visibleRepositories = async (): Promise<RepositoryName[]> => {
    const found = await listInstallationRepositories(this.appClient, this.forInstallation, this.app.installationId);
    for (const { installationId, ...repository } of found) {
      this.installationIds.set(repositoryKey(repository), Promise.resolve(installationId));
    }
    return found.map(({ owner, name }) => ({ owner, name }));
  };

  ownLogin = askedOnce(async () => {
    const { slug } = (await this.appClient.rest.apps.getAuthenticated()).data ?? {};
    if (!slug) throw new Error('GitHub did not name the App (GET /app has no slug)');
    return `${slug}[bot]`;
  });

  tokenFor = async (repository: RepositoryName): Promise<string> => {
    const client = await this.forRepository(repository);
    const auth = (await client.auth({ type: 'installation' })) as { token: string };
    return auth.token;
  };
}

export function createGitHubClients(options: GitHubClientOptions): GitHubClients {
  const observer = new RateLimitObserver();
  const newClient = clientMaker(options, observer);
  if (options.auth.type === 'token') return tokenClients(options.auth.token, newClient, observer);
  return new AppClients(options.auth, newClient, observer);
}
