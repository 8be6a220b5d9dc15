// `preview-operator run`: the operator process. Every replica serves webhooks (recording
// desired state is safe from any replica); only the replica holding the Lease runs the
// controllers and the resync. On SIGTERM it stops taking webhooks, makes the writes of the
// deliveries it already accepted, drains in-flight reconciles within the deadline and
// releases the Lease; when it loses the Lease it exits non-zero so Kubernetes restarts it as
// a fresh candidate (two leaders must never act at once).
import type { PreviewEnvironmentSpec } from '../constructs/api-types.js';
import type { OperatorConfig } from './config.js';
import { registerAlgorithmController } from './controllers/algorithm-controller.js';
import { registerDatabaseController } from './controllers/database-controller.js';
import { previewEnvironmentFinalizer, registerPreviewEnvironmentController } from './controllers/preview-environment.js';
import { readAhead } from './controllers/preview-environment-rendering.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from './intake/environment-store.js';
import { ApprovalRevoker } from './github/reporting/approval-revoker.js';
import { DeliveryDedupe } from './intake/delivery-dedupe.js';
import { EnvironmentWriter } from './intake/environment-writer.js';
import { createChecksGate } from './github/checks-gate.js';
import { createLabelRemover } from './github/reporting/label-remover.js';
import { createGitHubClients, type GitHubClients } from './github/octokit-factory.js';
import { GitHubReporter } from './github/reporting/reporter-github.js';
import { GitHubPreviewFiles } from './github/preview-files-api.js';
import { createResyncRunnable } from './intake/resync.js';
import { WebhookReceiver } from './intake/webhook-receiver.js';
import { RepositoryCache } from './git/repository-cache.js';
import { KubeClient, loadKubeConfig, type KubeAccess } from './kube/client.js';
import { Manager } from './kube/manager.js';
import type { OperatorLogger } from './logger.js';
import { createServer } from './server/create-server.js';
import { Readiness } from './server/health.js';
import { metricsRouter } from './server/metrics-router.js';
import { OperatorMetrics } from './server/metrics.js';
import { startServer, type RunningServer } from './server/start-server.js';
import { checksRequirement, effectivePolicy } from './policy/policy-config.js';
import type { RepositoryFacts } from './policy/pull-request-facts.js';
import { AllowedKinds } from './synth/guard-allowed-kinds.js';
import type { PreviewRenderSettings } from './synth/render-preview.js';
import { sandboxRunnerFor } from './synth/sandbox-remote.js';
import type { SandboxRunner } from './synth/sandbox.js';

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
  repositories: RepositoryCache;
  sandbox: SandboxRunner;
  renderSettings: PreviewRenderSettings;
  allowedKinds: AllowedKinds;
}

export interface RunningOperator {
  /** Full URL GitHub posts deliveries to, e.g. `http://127.0.0.1:8080/api/github/webhooks`. */
  webhookUrl: string;
  metricsUrl: string;
  manager: Manager;
  metrics: OperatorMetrics;
  readiness: Readiness;
  /** Resolves with the process exit code once the operator has stopped by itself (leadership lost: 1). */
  readonly done: Promise<number>;
  /** Graceful stop: readiness off, webhooks closed (in-flight ones answered), their writes made, reconciles drained, Lease released. */
  stop(): Promise<number>;
}

export interface StartOperatorOptions {
  logger: OperatorLogger;
  /** Credentials to use instead of the configured kubeconfig (the `dev` command's cluster). */
  kubeConfig?: KubeAccess;
  /** Where repositories are cloned from instead of the payload's `clone_url` (the `dev` command's local repositories). */
  cloneUrl?: (repository: RepositoryFacts) => string;
}

export async function startOperator(config: OperatorConfig, options: StartOperatorOptions): Promise<RunningOperator> {
  const { logger } = options;
  const enabled = new Set(config.controllers);
  // The kubeconfig setting is KUBECONFIG's value when no flag is given: one file, or a list merged as kubectl merges it.
  const kubeConfig = options.kubeConfig ?? await loadKubeConfig({ path: config.kube.kubeconfig, context: config.kube.context });
  const client = new KubeClient(kubeConfig);
  const metrics = new OperatorMetrics();
  const le = config.leaderElection;
  const manager = new Manager({
    client,
    leaderElection: le.enabled
      ? { namespace: le.namespace, name: le.leaseName, identity: le.identity, leaseDurationMs: le.leaseDurationMs, renewDeadlineMs: le.renewDeadlineMs, retryPeriodMs: le.retryPeriodMs }
      : false,
    drainDeadlineMs: config.drainTimeoutMs,
    logger: logger.child({ component: 'manager' }),
    metrics,
    onLeadershipChange: metrics.leadershipChanged,
  });

  const github = config.github.auth
    ? createGitHubClients({
      auth: config.github.auth,
      baseUrl: config.github.baseUrl,
      throttle: { enabled: config.github.throttle, maxRetryAfterSeconds: config.github.maxRetryAfterSeconds },
      log: logger.child({ component: 'github' }),
    })
    : undefined;
  if (github) metrics.trackGitHub(github.rateLimits);

  const parts: OperatorParts = {
    config, manager, client, logger, metrics, github,
    reporter: github ? new GitHubReporter({ clients: github, log: logger.child({ component: 'reporter' }) }) : undefined,
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

  if (enabled.has('algorithm')) {
    registerAlgorithmController(manager, {
      logger: logger.child({ controller: 'algorithm' }),
      workers: config.workers.algorithm,
      ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
      analysis: {
        intervalMs: config.canary.analysisIntervalMs,
        successChecks: config.canary.successChecks,
        failureThreshold: config.canary.failureThreshold,
        ...(config.canary.prometheusUrl ? { prometheusUrl: config.canary.prometheusUrl } : {}),
        ...(config.canary.query ? { query: config.canary.query } : {}),
      },
      ...(config.canary.latencyMetric ? { latencyMetric: config.canary.latencyMetric } : {}),
      gatewayApi: config.canary.traffic === 'httproute',
    });
  }
  if (enabled.has('database')) {
    registerDatabaseController(manager, {
      logger: logger.child({ controller: 'database' }),
      workers: config.workers.database,
      ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
    });
  }
  // `.preview/` through the contents API (no git process); git checks out only for `.preview/main.ts`.
  const previewFiles = enabled.has('preview-environment') && github ? new GitHubPreviewFiles({ clients: github }) : undefined;
  if (enabled.has('preview-environment')) {
    if (!parts.reporter || !github || !previewFiles) throw new Error('the preview-environment controller needs GitHub credentials');
    const tls = config.previews.tls;
    registerPreviewEnvironmentController(manager, {
      reporter: parts.reporter,
      repositories: parts.repositories,
      previewFiles,
      sandbox: parts.sandbox,
      sandboxConcurrency: config.sandbox.concurrency,
      workers: config.workers.previewEnvironment,
      domain: config.previews.domain,
      ingressClassName: config.previews.ingressClass,
      tlsIssuer: tls ? tls.issuer : false,
      policy: config.policy,
      allowedKinds: config.previews.allowedKinds,
      renderPolicy: config.previews.renderPolicy,
      podSecurity: config.previews.podSecurity,
      // file:// repositories (dev, tests) need no token; GitHub ones get the installation's.
      gitToken: async (repository) => github.tokenFor(repository),
      checksGate: createChecksGate({ clients: github, requirement: (repository) => checksRequirement(effectivePolicy(config.policy, repository)) }),
      deliveryTiming: { applied: (s) => metrics.observeWebhookToApplied(s), ready: (s) => metrics.observeWebhookToReady(s) },
      ...(config.previews.environmentSelector ? { environmentSelector: config.previews.environmentSelector } : {}),
      logger: logger.child({ controller: 'preview-environment' }),
    });
  }

  // Written with the controller's finalizer when this process runs the controller (on the
  // leader), so a new environment's first reconcile renders at once instead of writing the
  // finalizer first. A webhook-only process adds none: nothing here could ever remove it.
  const environmentStore = new KubeEnvironmentStore(client, { finalizers: enabled.has('preview-environment') ? [previewEnvironmentFinalizer] : [] });

  // Accepted deliveries' PreviewEnvironment writes, made after the answer, and the resync's,
  // ordered with them (one queue per process).
  const writer = (enabled.has('webhook') || enabled.has('resync')) && github
    ? new EnvironmentWriter({ store: environmentStore, observe: metrics.webhookWrite, logger: logger.child({ component: 'environment-writer' }) })
    : undefined;

  // The PreviewEnvironment cache: the resync's view, the receiver's (a delivery older than what an
  // environment records is stale), and the environment gauges.
  const environments = enabled.has('preview-environment') || enabled.has('webhook') || enabled.has('resync')
    ? manager.informer(previewEnvironmentKind)
    : undefined;
  if (environments) {
    metrics.trackEnvironments(() => environments.list());
    if (enabled.has('resync') && github && writer) {
      manager.addRunnable(createResyncRunnable({
        clients: github,
        writer,
        environments,
        policy: () => config.policy,
        ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
        intervalMs: config.resync.intervalMs,
        maxDeletionsPerPass: config.resync.maxDeletionsPerPass,
        logger: logger.child({ component: 'resync' }),
        onPass: metrics.resyncPass,
      }));
    }
  }

  if (writer) metrics.trackWebhookWrites(() => writer.pending);
  const webhook = writer && github && enabled.has('webhook')
    ? new WebhookReceiver({
      secret: config.webhook.secrets,
      writer,
      policy: config.policy,
      approvals: new ApprovalRevoker({ removeLabel: createLabelRemover(github), logger: logger.child({ component: 'approvals' }) }),
      maxBodyBytes: config.webhook.maxBodyBytes,
      dedupe: new DeliveryDedupe({ windowMs: config.webhook.dedupeWindowMs }),
      logger: logger.child({ component: 'webhook' }),
      observe: metrics.webhookDelivery,
      environments,
      ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
      // The leader renders: it reads `.preview/` while the environment is being written.
      ...(previewFiles ? { onUpsert: (spec: PreviewEnvironmentSpec) => { if (manager.isLeader()) void readAhead(previewFiles, spec); } } : {}),
    })
    : undefined;

  let listening = false;
  const readiness = new Readiness()
    .add('informers-synced', () => manager.hasSynced())
    .add('webhook-server', () => listening);
  const sharedPort = config.metrics.port === config.webhook.port;
  const app = createServer({
    webhook,
    webhookPath: config.webhook.path,
    logger: logger.child({ component: 'server' }),
    routers: [readiness.router(), ...(sharedPort ? [metricsRouter(metrics)] : [])],
  });
  const server = await startServer(app, { host: config.webhook.host, port: config.webhook.port });
  let metricsServer: RunningServer | undefined;
  try {
    metricsServer = sharedPort ? undefined : await startServer(createServer({ routers: [metricsRouter(metrics)] }), { host: config.webhook.host, port: config.metrics.port });
  } catch (err) {
    await server.close();
    throw err;
  }
  listening = true;
  manager.start();
  logger.info({
    controllers: config.controllers, webhook: `${server.url}${config.webhook.path}`, metrics: `${(metricsServer ?? server).url}/metrics`,
    leaderElection: le.enabled ? `${le.namespace}/${le.leaseName} as ${manager.identity}` : 'off',
  }, 'operator started');

  let stopping: Promise<number> | undefined;
  const stop = (exitCode: number): Promise<number> => {
    stopping ??= (async () => {
      // Unready first, so the Service stops routing deliveries here while the rest drains.
      readiness.drain();
      listening = false;
      await server.close();
      // Deliveries answered 202 are owed their write; what the deadline cuts off, the resync repairs.
      // Both within one deadline (together, not one after the other: the pod's grace period is one).
      await Promise.all([writer?.drain(config.drainTimeoutMs), manager.stop()]);
      await metricsServer?.close();
      logger.info({ exitCode }, 'operator stopped');
      return exitCode;
    })();
    return stopping;
  };
  const done = manager.done.then((reason) => {
    if (reason === 'leadership-lost') {
      logger.error({ identity: manager.identity }, 'lost the leader lease: exiting so that this replica restarts as a candidate');
      return stop(1);
    }
    return stop(0);
  });

  return {
    webhookUrl: `${server.url}${config.webhook.path}`,
    metricsUrl: `${(metricsServer ?? server).url}/metrics`,
    manager, metrics, readiness,
    done,
    stop: () => stop(0),
  };
}
