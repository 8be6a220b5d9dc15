// The operator's parts assembled the way src/cli-run.ts startOperator assembles them, for the
// bench to fall back on while that file is being changed: a Manager without leader election,
// the Algorithm, Database and PreviewEnvironment controllers, the GitHub reporter, the webhook
// receiver, the resync and the HTTP server.
import { registerAlgorithmController } from '../src/controllers/algorithm-controller.js';
import { registerDatabaseController } from '../src/controllers/database-controller.js';
import { registerPreviewEnvironmentController } from '../src/controllers/preview-environment.js';
import type { OperatorConfig } from '../src/config.js';
import { ApprovalRevoker } from '../src/github/approval-revoker.js';
import { DeliveryDedupe } from '../src/github/delivery-dedupe.js';
import { KubeEnvironmentStore, previewEnvironmentKind } from '../src/github/environment-store.js';
import { createLabelRemover } from '../src/github/label-remover.js';
import { createGitHubClients } from '../src/github/octokit-factory.js';
import { GitHubReporter } from '../src/github/reporter-github.js';
import { createResyncRunnable } from '../src/github/resync.js';
import { WebhookReceiver } from '../src/github/webhook-receiver.js';
import { RepositoryCache } from '../src/git/repository-cache.js';
import { KubeClient, loadKubeConfig } from '../src/kube/client.js';
import { Manager } from '../src/kube/manager.js';
import type { OperatorLogger } from '../src/logger.js';
import type { RepositoryFacts } from '../src/policy/pull-request-facts.js';
import { createServer } from '../src/server/create-server.js';
import { startServer } from '../src/server/start-server.js';
import { Sandbox } from '../src/synth/sandbox.js';

export async function assembleOperator(config: OperatorConfig, logger: OperatorLogger, cloneUrl: (r: RepositoryFacts) => string) {
  const client = new KubeClient(loadKubeConfig({ path: config.kube.kubeconfig }));
  const manager = new Manager({ client, leaderElection: false, drainDeadlineMs: config.drainTimeoutMs, logger: logger.child({ component: 'manager' }) });
  if (!config.github.auth) throw new Error('GitHub credentials are required');
  const github = createGitHubClients({
    auth: config.github.auth, baseUrl: config.github.baseUrl,
    throttle: { enabled: config.github.throttle, maxRetryAfterSeconds: config.github.maxRetryAfterSeconds },
    log: logger.child({ component: 'github' }),
  });
  registerAlgorithmController(manager, { logger: logger.child({ controller: 'algorithm' }) });
  registerDatabaseController(manager, { logger: logger.child({ controller: 'database' }) });
  registerPreviewEnvironmentController(manager, {
    reporter: new GitHubReporter({ clients: github, log: logger.child({ component: 'reporter' }) }),
    repositories: new RepositoryCache({
      cacheDir: config.git.cacheDir, maxConcurrentGitProcesses: config.git.concurrency, gitTimeoutMs: config.git.timeoutMs,
      allowedProtocols: config.git.allowedProtocols,
    }),
    sandbox: new Sandbox({ timeoutMs: config.sandbox.timeoutMs, maxHeapMb: config.sandbox.maxHeapMb, maxRssMb: config.sandbox.maxRssMb }),
    domain: config.previews.domain,
    ingressClassName: config.previews.ingressClass,
    ...(config.previews.tls ? { tlsIssuer: config.previews.tls.issuer } : {}),
    podSecurity: config.previews.podSecurity,
    allowedKinds: config.previews.allowedKinds,
    policy: config.policy,
    logger: logger.child({ controller: 'preview-environment' }),
  });
  if (config.controllers.includes('resync')) {
    manager.addRunnable(createResyncRunnable({
      clients: github, store: new KubeEnvironmentStore(client), environments: manager.informer(previewEnvironmentKind),
      policy: () => config.policy, cloneUrl,
      intervalMs: config.resync.intervalMs, maxDeletionsPerPass: config.resync.maxDeletionsPerPass, logger: logger.child({ component: 'resync' }),
    }));
  }
  const webhook = new WebhookReceiver({
    secret: config.webhook.secrets,
    store: new KubeEnvironmentStore(client),
    policy: config.policy,
    approvals: new ApprovalRevoker({ removeLabel: createLabelRemover(github), logger: logger.child({ component: 'approvals' }) }),
    maxBodyBytes: config.webhook.maxBodyBytes,
    dedupe: new DeliveryDedupe({ windowMs: config.webhook.dedupeWindowMs }),
    logger: logger.child({ component: 'webhook' }),
    cloneUrl,
  });
  const server = await startServer(createServer({ webhook, webhookPath: config.webhook.path, logger: logger.child({ component: 'server' }) }), { host: config.webhook.host, port: config.webhook.port });
  manager.start();
  return {
    webhookUrl: `${server.url}${config.webhook.path}`,
    metricsUrl: '',
    async stop() {
      await server.close();
      await manager.stop();
      client.close();
      return 0;
    },
  };
}
