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
  readonly rateLimits: RateLimitObserver;
}

export function createGitHubClients(options: GitHubClientOptions): GitHubClients {
  const log = options.log ?? silentLogger;
  const observer = new RateLimitObserver();
  // Throttling groups are process-wide and keyed by id: one key per credential of this
  // factory, so two factories (or two installations) never share a write queue.
  const factoryId = randomBytes(4).toString('hex');
  const maxRetryAfter = options.throttle?.maxRetryAfterSeconds ?? 60;
  const secondaryRetries = options.throttle?.secondaryRateLimitRetries ?? 2;
  const primaryRetries = options.throttle?.rateLimitRetries ?? 1;
  // Every client of this factory, the App's token exchange included, goes through the proxy when one is set.
  const fetch = githubFetch(options.proxyEnv ?? process.env);

  const octokitLog = {
    debug: (message: string) => log.debug({ component: 'octokit' }, message),
    info: (message: string) => log.debug({ component: 'octokit' }, message),
    warn: (message: string) => log.warn({ component: 'octokit' }, message),
    // Failed requests are thrown to the caller, which decides whether they matter.
    error: (message: string) => log.debug({ component: 'octokit' }, message),
  };

  function newClient(client: string, auth: Record<string, unknown>): GitHubClient {
    const guard: RateLimitGuardOptions = { observer, client, maxWaitSeconds: maxRetryAfter };
    return new PreviewOctokit({
      ...auth,
      baseUrl: options.baseUrl,
      userAgent: options.userAgent ?? 'preview-operator',
      log: octokitLog,
      ...(fetch ? { request: { fetch } } : {}),
      rateLimitGuard: guard,
      conditionalRequests: { maxEntries: options.etagCacheEntries ?? 500 },
      throttle: {
        enabled: options.throttle?.enabled ?? true,
        id: `${factoryId}:${client}`,
        onSecondaryRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
          const again = retryCount < secondaryRetries && retryAfter <= maxRetryAfter;
          log.warn({ client, method: request.method, url: request.url, retryAfter, retryCount, retrying: again }, 'GitHub secondary rate limit');
          return again;
        },
        onRateLimit: (retryAfter: number, request: { method: string; url: string }, _octokit: unknown, retryCount: number) => {
          const again = retryCount < primaryRetries && retryAfter <= maxRetryAfter;
          log.warn({ client, method: request.method, url: request.url, retryAfter, retryCount, retrying: again }, 'GitHub rate limit exhausted');
          return again;
        },
      },
      retry: {
        enabled: options.retry?.enabled ?? true,
        retries: options.retry?.retries ?? 3,
      },
    });
  }

  if (options.auth.type === 'token') {
    const client = newClient('token', { auth: options.auth.token });
    const token = options.auth.token;
    return {
      authType: 'token',
      forRepository: async () => client,
      forInstallation: () => {
        throw new Error('installations exist only when authenticated as a GitHub App');
      },
      installationIdFor: () => Promise.reject(new Error('installations exist only when authenticated as a GitHub App')),
      forgetRepository: () => {},
      visibleRepositories: async () => [],
      tokenFor: async () => token,
      rateLimits: observer,
    };
  }

  const app = options.auth;
  const appClient = newClient('app', { authStrategy: createAppAuth, auth: { appId: app.appId, privateKey: app.privateKey } });
  const installationClients = new Map<number, GitHubClient>();
  const installationIds = new Map<string, Promise<number>>();

  function forInstallation(installationId: number): GitHubClient {
    let client = installationClients.get(installationId);
    if (!client) {
      client = newClient(`installation:${installationId}`, {
        authStrategy: createAppAuth,
        auth: { appId: app.appId, privateKey: app.privateKey, installationId },
      });
      installationClients.set(installationId, client);
    }
    return client;
  }

  function installationIdFor(repository: RepositoryName): Promise<number> {
    if (app.installationId !== undefined) return Promise.resolve(app.installationId);
    const key = repositoryKey(repository);
    let id = installationIds.get(key);
    if (!id) {
      id = appClient.rest.apps.getRepoInstallation({ owner: repository.owner, repo: repository.name }).then((r) => r.data.id);
      installationIds.set(key, id);
      // A failed lookup is not cached: the next call asks again.
      id.catch(() => installationIds.delete(key));
    }
    return id;
  }

  return {
    authType: 'app',
    forRepository: async (repository) => forInstallation(await installationIdFor(repository)),
    forInstallation,
    installationIdFor,
    forgetRepository: (repository) => void installationIds.delete(repositoryKey(repository)),
    visibleRepositories: async () => {
      const found = await listInstallationRepositories(appClient, forInstallation, app.installationId);
      for (const { installationId, ...repository } of found) {
        installationIds.set(repositoryKey(repository), Promise.resolve(installationId));
      }
      return found.map(({ owner, name }) => ({ owner, name }));
    },
    tokenFor: async (repository) => {
      const client = forInstallation(await installationIdFor(repository));
      const auth = (await client.auth({ type: 'installation' })) as { token: string };
      return auth.token;
    },
    rateLimits: observer,
  };
}
