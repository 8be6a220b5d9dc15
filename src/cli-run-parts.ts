// The parts of the operator process, built once from its configuration: the Kubernetes client
// and the manager (leader election, drain deadline), metrics, the GitHub clients and reporter
// when credentials are configured, the git cache and the sandbox. Building starts nothing.
import type { OperatorConfig } from './config.js';
import { createGitHubClients, type GitHubClients } from './github/octokit-factory.js';
import { GitHubPreviewFiles } from './github/preview-files-api.js';
import { GitHubReporter } from './github/reporting/reporter-github.js';
import { RepositoryCache } from './git/repository-cache.js';
import { KubeClient, loadKubeConfig } from './kube/client.js';
import { Manager } from './kube/manager.js';
import type { OperatorLogger } from './logger.js';
import { OperatorMetrics } from './server/metrics.js';
import { AllowedKinds } from './synth/guard-allowed-kinds.js';
import type { PreviewRenderSettings } from './synth/render-preview.js';
import { sandboxRunnerFor } from './synth/sandbox-remote.js';
import type { SandboxRunner } from './synth/sandbox.js';
import type { StartOperatorOptions } from './cli-run.js';

/** Everything a controller registration may need; built once per process. */
export interface OperatorParts {
  config: OperatorConfig;
  manager: Manager;
  client: KubeClient;
  logger: OperatorLogger;
  metrics: OperatorMetrics;
  /** Present when GitHub credentials are configured. */
  github?: GitHubClients;
  reporter?: GitHubReporter;
  /** `.preview/` through the contents API (no git process): present when the preview-environment controller runs. */
  previewFiles?: GitHubPreviewFiles;
  repositories: RepositoryCache;
  sandbox: SandboxRunner;
  renderSettings: PreviewRenderSettings;
  allowedKinds: AllowedKinds;
}

export async function buildParts(config: OperatorConfig, options: StartOperatorOptions): Promise<OperatorParts> {
  const { logger } = options;
  // The kubeconfig setting is KUBECONFIG's value when no flag is given: one file, or a list merged as kubectl merges it.
  const kubeConfig = options.kubeConfig ?? (await loadKubeConfig({ path: config.kube.kubeconfig, context: config.kube.context }));
  const client = new KubeClient(kubeConfig);
  const metrics = new OperatorMetrics();
  const manager = createManager(config, client, metrics, logger);
  const github = createGitHub(config, metrics, logger);
  return {
    config,
    manager,
    client,
    logger,
    metrics,
    github,
    reporter: github ? new GitHubReporter({ clients: github, log: logger.child({ component: 'reporter' }) }) : undefined,
    // git checks out only for `.preview/main.ts`.
    previewFiles: config.controllers.includes('preview-environment') && github ? new GitHubPreviewFiles({ clients: github }) : undefined,
    repositories: new RepositoryCache({
      cacheDir: config.git.cacheDir,
      maxConcurrentGitProcesses: config.git.concurrency,
      gitTimeoutMs: config.git.timeoutMs,
      allowedProtocols: config.git.allowedProtocols,
    }),
    sandbox: sandboxRunnerFor(config.sandbox),
    renderSettings: {
      domain: config.previews.domain,
      ingressClassName: config.previews.ingressClass,
      tls: config.previews.tls,
      podSecurity: config.previews.podSecurity,
    },
    allowedKinds: new AllowedKinds(config.previews.allowedKinds),
  };
}

function createManager(config: OperatorConfig, client: KubeClient, metrics: OperatorMetrics, logger: OperatorLogger): Manager {
  const le = config.leaderElection;
  return new Manager({
    client,
    leaderElection: le.enabled
      ? {
          namespace: le.namespace,
          name: le.leaseName,
          identity: le.identity,
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
        }
      : false,
    drainDeadlineMs: config.drainTimeoutMs,
    logger: logger.child({ component: 'manager' }),
    metrics,
    onLeadershipChange: metrics.leadershipChanged,
  });
}

function createGitHub(config: OperatorConfig, metrics: OperatorMetrics, logger: OperatorLogger): GitHubClients | undefined {
  if (!config.github.auth) return undefined;
  const github = createGitHubClients({
    auth: config.github.auth,
    baseUrl: config.github.baseUrl,
    throttle: { enabled: config.github.throttle, maxRetryAfterSeconds: config.github.maxRetryAfterSeconds },
    log: logger.child({ component: 'github' }),
  });
  metrics.trackGitHub(github.rateLimits);
  return github;
}
