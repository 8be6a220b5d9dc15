// The controllers this process runs (`--controllers`), registered with the manager; they start
// reconciling when the manager starts and this replica leads.
import { registerAlgorithmController } from './controllers/algorithm-controller.js';
import { registerDatabaseController } from './controllers/database-controller.js';
import { registerPreviewEnvironmentController } from './controllers/preview-environment.js';
import { createChecksGate } from './github/checks-gate.js';
import { checksRequirement, effectivePolicy } from './policy/policy-config.js';
import type { OperatorParts } from './cli-run-parts.js';

/** The PreviewEnvironment controller last: it shares the namespace cache of the others, when they watch every namespace. */
export function registerControllers(parts: OperatorParts): void {
  const enabled = new Set(parts.config.controllers);
  if (enabled.has('algorithm')) registerAlgorithm(parts);
  if (enabled.has('database')) registerDatabase(parts);
  if (enabled.has('preview-environment')) registerPreviewEnvironment(parts);
}

function registerAlgorithm({ manager, config, logger }: OperatorParts): void {
  const { canary } = config;
  registerAlgorithmController(manager, {
    logger: logger.child({ controller: 'algorithm' }),
    workers: config.workers.algorithm,
    ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
    analysis: {
      intervalMs: canary.analysisIntervalMs,
      successChecks: canary.successChecks,
      failureThreshold: canary.failureThreshold,
      ...(canary.prometheusUrl ? { prometheusUrl: canary.prometheusUrl } : {}),
      ...(canary.query ? { query: canary.query } : {}),
    },
    ...(canary.latencyMetric ? { latencyMetric: canary.latencyMetric } : {}),
    gatewayApi: canary.traffic === 'httproute',
  });
}

function registerDatabase({ manager, config, logger }: OperatorParts): void {
  registerDatabaseController(manager, {
    logger: logger.child({ controller: 'database' }),
    workers: config.workers.database,
    ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
  });
}

function registerPreviewEnvironment(parts: OperatorParts): void {
  const { manager, config, metrics, logger, github, reporter, previewFiles } = parts;
  if (!reporter || !github || !previewFiles) throw new Error('the preview-environment controller needs GitHub credentials');
  const { previews } = config;
  registerPreviewEnvironmentController(manager, {
    reporter,
    repositories: parts.repositories,
    previewFiles,
    sandbox: parts.sandbox,
    sandboxConcurrency: config.sandbox.concurrency,
    workers: config.workers.previewEnvironment,
    domain: previews.domain,
    ingressClassName: previews.ingressClass,
    tlsIssuer: previews.tls ? previews.tls.issuer : false,
    ...(previews.tls ? { tlsMode: previews.tls.mode } : {}),
    ...(previews.tlsWildcardSecret ? { tlsWildcardSecret: previews.tlsWildcardSecret } : {}),
    policy: config.policy,
    allowedKinds: previews.allowedKinds,
    renderPolicy: previews.renderPolicy,
    podSecurity: previews.podSecurity,
    // file:// repositories (dev, tests) need no token; GitHub ones get the installation's.
    gitToken: async (repository) => github.tokenFor(repository),
    checksGate: createChecksGate({
      clients: github,
      requirement: (repository) => checksRequirement(effectivePolicy(config.policy, repository)),
    }),
    deliveryTiming: { applied: (s) => metrics.observeWebhookToApplied(s), ready: (s) => metrics.observeWebhookToReady(s) },
    ...(previews.environmentSelector ? { environmentSelector: previews.environmentSelector } : {}),
    logger: logger.child({ controller: 'preview-environment' }),
  });
}
