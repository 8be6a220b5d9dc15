// The webhook endpoint as `preview-operator run` serves it — WebhookReceiver and its
// EnvironmentWriter behind the real HTTP server — for tests that post signed deliveries to it.
import type { ApprovalRevoker } from '../../src/github/reporting/approval-revoker.js';
import type { EnvironmentStore } from '../../src/intake/environment-store.js';
import { EnvironmentWriter, type EnvironmentWriterOptions } from '../../src/intake/environment-writer.js';
import { WebhookReceiver, type WebhookReceiverOptions } from '../../src/intake/webhook-receiver.js';
import { silentLogger, type Logger } from '../../src/kube/logger.js';
import { resolvePolicyConfig } from '../../src/policy/policy-validation.js';
import { createServer } from '../../src/server/create-server.js';
import { startServer } from '../../src/server/start-server.js';

export interface WebhookEndpointOptions {
  secret: string;
  /** Where the writer records environments. */
  store: EnvironmentStore;
  approvals: ApprovalRevoker;
  /** Default: the built-in policy. */
  policy?: WebhookReceiverOptions['policy'];
  cloneUrl?: WebhookReceiverOptions['cloneUrl'];
  observe?: WebhookReceiverOptions['observe'];
  /** What the cluster records (an informer), for `stale` answers; default none (this receiver's memory only). */
  environments?: WebhookReceiverOptions['environments'];
  /** The writer's other options (backoff, observe). */
  writer?: Omit<EnvironmentWriterOptions, 'store' | 'logger'>;
  logger?: Logger;
}

export interface WebhookEndpoint {
  /** Where GitHub would post deliveries. */
  url: string;
  writer: EnvironmentWriter;
  /** Stops taking deliveries, lets the queued writes and approval removals finish. */
  close(): Promise<void>;
}

export async function startWebhookEndpoint(options: WebhookEndpointOptions): Promise<WebhookEndpoint> {
  const logger = options.logger ?? silentLogger;
  const writer = new EnvironmentWriter({ ...options.writer, store: options.store, logger });
  const receiver = new WebhookReceiver({
    secret: options.secret,
    writer,
    policy: options.policy ?? resolvePolicyConfig(),
    approvals: options.approvals,
    logger,
    ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
    ...(options.observe ? { observe: options.observe } : {}),
    ...(options.environments ? { environments: options.environments } : {}),
  });
  const server = await startServer(createServer({ webhook: receiver }));
  return {
    url: `${server.url}/api/github/webhooks`,
    writer,
    async close() {
      await server.close();
      await writer.idle();
      await options.approvals.close();
    },
  };
}
