// The intake of the operator process (GitHub → cluster): the writer that makes accepted
// deliveries' PreviewEnvironment writes after the answer, the PreviewEnvironment cache, the
// resync (leader only) and the webhook receiver (every replica). One writer per process, so
// the webhook's writes and the resync's are ordered.
import type { PreviewEnvironmentSpec } from '../constructs/api-types.js';
import { readAhead } from './controllers/preview-environment-rendering.js';
import { previewEnvironmentFinalizer } from './controllers/preview-environment.js';
import { ApprovalRevoker } from './github/reporting/approval-revoker.js';
import { createLabelRemover } from './github/reporting/label-remover.js';
import type { GitHubClients } from './github/octokit-factory.js';
import { DeliveryDedupe } from './intake/delivery-dedupe.js';
import { KubeEnvironmentStore, previewEnvironmentKind, requestRerun } from './intake/environment-store.js';
import { EnvironmentWriter } from './intake/environment-writer.js';
import { createResyncRunnable } from './intake/resync.js';
import { WebhookReceiver } from './intake/webhook-receiver.js';
import type { Informer } from './kube/informer.js';
import type { StartOperatorOptions } from './cli-run.js';
import type { OperatorParts } from './cli-run-parts.js';

export interface Intake {
  /** Present when the process takes webhooks or resyncs (and has GitHub credentials). */
  writer?: EnvironmentWriter;
  /** Present when the process takes webhooks. */
  webhook?: WebhookReceiver;
}

export function createIntake(parts: OperatorParts, options: StartOperatorOptions): Intake {
  const { config, manager, metrics, github } = parts;
  const enabled = new Set(config.controllers);
  const writer = (enabled.has('webhook') || enabled.has('resync')) && github ? createWriter(parts) : undefined;
  // The PreviewEnvironment cache: the resync's view, the receiver's (a delivery older than what an
  // environment records is stale), and the environment gauges.
  const environments =
    enabled.has('preview-environment') || enabled.has('webhook') || enabled.has('resync')
      ? manager.informer(previewEnvironmentKind)
      : undefined;
  if (environments) {
    metrics.trackEnvironments(() => environments.list());
    if (enabled.has('resync') && github && writer) addResync(parts, github, writer, environments, options);
  }
  if (writer) metrics.trackWebhookWrites(() => writer.pending);
  const webhook = writer && github && enabled.has('webhook') ? createReceiver(parts, github, writer, environments, options) : undefined;
  return { writer, webhook };
}

function createWriter({ config, client, metrics, logger }: OperatorParts): EnvironmentWriter {
  // Written with the controller's finalizer when this process runs the controller (on the
  // leader), so a new environment's first reconcile renders at once instead of writing the
  // finalizer first. A webhook-only process adds none: nothing here could ever remove it.
  const finalizers = config.controllers.includes('preview-environment') ? [previewEnvironmentFinalizer] : [];
  const store = new KubeEnvironmentStore(client, { finalizers });
  return new EnvironmentWriter({ store, observe: metrics.webhookWrite, logger: logger.child({ component: 'environment-writer' }) });
}

function addResync(
  { config, manager, metrics, logger }: OperatorParts,
  github: GitHubClients,
  writer: EnvironmentWriter,
  environments: Informer,
  options: StartOperatorOptions,
): void {
  manager.addRunnable(
    createResyncRunnable({
      clients: github,
      writer,
      environments,
      policy: () => config.policy,
      ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
      intervalMs: config.resync.intervalMs,
      maxDeletionsPerPass: config.resync.maxDeletionsPerPass,
      logger: logger.child({ component: 'resync' }),
      onPass: metrics.resyncPass,
    }),
  );
}

function createReceiver(
  { config, client, manager, metrics, logger, previewFiles }: OperatorParts,
  github: GitHubClients,
  writer: EnvironmentWriter,
  environments: Informer | undefined,
  options: StartOperatorOptions,
): WebhookReceiver {
  // The leader renders: it reads `.preview/` while the environment is being written.
  const onUpsert =
    previewFiles &&
    ((spec: PreviewEnvironmentSpec) => {
      if (manager.isLeader()) void readAhead(previewFiles, spec);
    });
  return new WebhookReceiver({
    secret: config.webhook.secrets,
    writer,
    policy: config.policy,
    approvals: new ApprovalRevoker({ removeLabel: createLabelRemover(github), logger: logger.child({ component: 'approvals' }) }),
    maxBodyBytes: config.webhook.maxBodyBytes,
    maxBodyBytesInFlight: config.webhook.maxBodyBytesInFlight,
    dedupe: new DeliveryDedupe({ windowMs: config.webhook.dedupeWindowMs }),
    logger: logger.child({ component: 'webhook' }),
    observe: metrics.webhookDelivery,
    environments,
    requestRerun: (name, requestedAt) => requestRerun(client, name, requestedAt),
    ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
    ...(onUpsert ? { onUpsert } : {}),
  });
}
