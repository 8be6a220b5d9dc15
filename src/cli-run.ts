// `preview-operator run`: the operator process. Every replica serves webhooks (recording
// desired state is safe from any replica); only the replica holding the Lease runs the
// controllers and the resync. On SIGTERM it stops taking webhooks, makes the writes of the
// deliveries it already accepted, drains in-flight reconciles within the deadline and
// releases the Lease. When it loses the Lease (an API server unreachable for longer than the
// renew deadline) it stops reconciling at once (two leaders must never act at once) and
// campaigns again, while it goes on answering webhooks and retrying their writes.
import type { OperatorConfig } from './config.js';
import type { Manager } from './kube/manager.js';
import type { KubeAccess } from './kube/client.js';
import type { OperatorLogger } from './logger.js';
import { createServer } from './server/create-server.js';
import { startDashboard, type RunningDashboard } from './server/dashboard.js';
import { Readiness } from './server/health.js';
import { metricsRouter } from './server/metrics-router.js';
import type { OperatorMetrics } from './server/metrics.js';
import { startServer, type RunningServer } from './server/start-server.js';
import type { RepositoryFacts } from './policy/pull-request-facts.js';
import type { WebhookReceiver } from './intake/webhook-receiver.js';
import { registerControllers } from './cli-run-controllers.js';
import { createIntake, type Intake } from './cli-run-intake.js';
import { buildParts, type OperatorParts } from './cli-run-parts.js';

export type { OperatorParts } from './cli-run-parts.js';

export interface RunningOperator {
  /** Full URL GitHub posts deliveries to, e.g. `http://127.0.0.1:8080/api/github/webhooks`. */
  webhookUrl: string;
  metricsUrl: string;
  /** The read-only dashboard (absent with `--dashboard=false`). */
  dashboardUrl?: string;
  manager: Manager;
  metrics: OperatorMetrics;
  readiness: Readiness;
  /** Resolves with the process exit code once the operator has stopped. */
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

/** Builds the parts, registers the controllers, wires the intake, listens, then starts the manager. */
export async function startOperator(config: OperatorConfig, options: StartOperatorOptions): Promise<RunningOperator> {
  const parts = await buildParts(config, options);
  registerControllers(parts);
  const intake = createIntake(parts, options);
  const servers = await startServers(parts, intake.webhook);
  servers.dashboard = await serveDashboard(parts, servers);
  return run(parts, intake, servers);
}

interface Servers {
  server: RunningServer;
  /** Absent when metrics are served on the webhook port. */
  metricsServer?: RunningServer;
  dashboard?: RunningDashboard;
  readiness: Readiness;
  /** Whether the webhook server counts as ready. */
  setListening(listening: boolean): void;
}

/** The webhook server (with /healthz and /readyz) and the metrics server, listening but not yet ready. */
async function startServers({ config, manager, metrics, logger }: OperatorParts, webhook: WebhookReceiver | undefined): Promise<Servers> {
  let listening = false;
  const readiness = new Readiness().add('informers-synced', () => manager.hasSynced()).add('webhook-server', () => listening);
  const setListening = (value: boolean) => void (listening = value);
  const sharedPort = config.metrics.port === config.webhook.port;
  const app = createServer({
    webhook,
    webhookPath: config.webhook.path,
    logger: logger.child({ component: 'server' }),
    routers: [readiness.router(), ...(sharedPort ? [metricsRouter(metrics)] : [])],
  });
  const { host } = config.webhook;
  const server = await startServer(app, { host, port: config.webhook.port });
  if (sharedPort) return { server, readiness, setListening };
  try {
    const metricsServer = await startServer(createServer({ routers: [metricsRouter(metrics)] }), { host, port: config.metrics.port });
    return { server, metricsServer, readiness, setListening };
  } catch (err) {
    await server.close();
    throw err;
  }
}

/** The read-only dashboard on a port of its own, from the manager's informer; closes the other servers when it cannot listen. */
async function serveDashboard({ config, manager, logger }: OperatorParts, servers: Servers): Promise<RunningDashboard | undefined> {
  if (!config.dashboard.enabled) return undefined;
  const selector = config.previews.environmentSelector;
  try {
    return await startDashboard({
      manager,
      host: config.dashboard.host,
      port: config.dashboard.port,
      githubApiUrl: config.github.baseUrl,
      ...(selector ? { environmentSelector: selector } : {}),
      logger: logger.child({ component: 'dashboard' }),
    });
  } catch (err) {
    await Promise.all([servers.server.close(), servers.metricsServer?.close()]);
    throw err;
  }
}

/** Ready, the manager started; stops gracefully when asked. Losing the lease stops only the reconciling (see manager.ts). */
function run({ config, manager, metrics, logger }: OperatorParts, { writer }: Intake, servers: Servers): RunningOperator {
  const { server, metricsServer, dashboard, readiness } = servers;
  const le = config.leaderElection;
  servers.setListening(true);
  manager.start();
  logger.info(
    {
      controllers: config.controllers,
      webhook: `${server.url}${config.webhook.path}`,
      metrics: `${(metricsServer ?? server).url}/metrics`,
      dashboard: dashboard ? `${dashboard.url}/` : 'off',
      leaderElection: le.enabled ? `${le.namespace}/${le.leaseName} as ${manager.identity}` : 'off',
    },
    'operator started',
  );

  const shutdown = async (exitCode: number): Promise<number> => {
    // Unready first, so the Service stops routing deliveries here while the rest drains.
    readiness.drain();
    servers.setListening(false);
    await server.close();
    // Deliveries answered 202 are owed their write; what the deadline cuts off, the resync repairs.
    // Both within one deadline (together, not one after the other: the pod's grace period is one).
    await Promise.all([writer?.drain(config.drainTimeoutMs), manager.stop()]);
    await Promise.all([metricsServer?.close(), dashboard?.close()]);
    logger.info({ exitCode }, 'operator stopped');
    return exitCode;
  };
  let stopping: Promise<number> | undefined;
  const stop = (exitCode: number): Promise<number> => (stopping ??= shutdown(exitCode));
  const done = manager.done.then(() => stop(0));

  return {
    webhookUrl: `${server.url}${config.webhook.path}`,
    metricsUrl: `${(metricsServer ?? server).url}/metrics`,
    ...(dashboard ? { dashboardUrl: `${dashboard.url}/` } : {}),
    manager,
    metrics,
    readiness,
    done,
    stop: () => stop(0),
  };
}
