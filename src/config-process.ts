// The settings of the process itself: which controllers it runs (and so which other settings it
// needs), their workers, logging, draining, metrics, leader election and the Algorithm
// controller's canary analysis.
import os from 'node:os';
import type { ConfigPurpose, OperatorConfig } from './config.js';
import { names, type SettingReader } from './config-reader.js';
import { controllerNames, type ControllerName } from './config-settings.js';
import { logLevels } from './logger.js';

/** What the enabled controllers require of the other settings. */
export interface ControllerNeeds {
  /** The enabled controllers that talk to GitHub, as the user named them (none unless the process runs). */
  gitHub: ControllerName[];
  webhookSecret: boolean;
  previewDomain: boolean;
}

interface ControllerSettings {
  controllers: ControllerName[];
  needs: ControllerNeeds;
}

const gitHubControllers: readonly ControllerName[] = ['webhook', 'resync', 'preview-environment'];

/** The controllers this process runs, in the table's order, and what they need. */
export function controllerSettings(read: SettingReader, purpose: ConfigPurpose): ControllerSettings {
  const given = read.raw('controllers')!;
  const controllers = read.list('controllers');
  const unknown = controllers.filter((c) => !controllerNames.includes(c as ControllerName));
  if (unknown.length > 0) {
    const known = `(known: ${controllerNames.join(', ')})`;
    read.bad('controllers', given, `unknown controller${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} ${known}`);
  } else if (controllers.length === 0) {
    read.bad('controllers', given, `name at least one of: ${controllerNames.join(', ')}`);
  }
  const enabled = new Set(controllers as ControllerName[]);
  const run = purpose === 'run';
  const needs = {
    gitHub: run ? [...enabled].filter((c) => gitHubControllers.includes(c)) : [],
    webhookSecret: run && enabled.has('webhook'),
    previewDomain: run && enabled.has('preview-environment'),
  };
  return { controllers: controllerNames.filter((c) => enabled.has(c)), needs };
}

type ProcessSettings = Pick<OperatorConfig, 'kube' | 'workers' | 'watchNamespace' | 'logLevel' | 'drainTimeoutMs' | 'metrics'>;

export function processSettings(read: SettingReader): ProcessSettings {
  const watchNamespace = read.str('watch-namespace');
  if (watchNamespace !== undefined && !names.dnsLabel.test(watchNamespace)) {
    read.problem('watch-namespace', `"${watchNamespace}" is not a valid namespace name`);
  }
  return {
    kube: { kubeconfig: read.str('kubeconfig'), context: read.str('context') },
    workers: {
      previewEnvironment: read.int('preview-environment-workers', 1, 256)!,
      algorithm: read.int('algorithm-workers', 1, 256)!,
      database: read.int('database-workers', 1, 256)!,
    },
    ...(watchNamespace ? { watchNamespace } : {}),
    logLevel: read.oneOf('log-level', logLevels)!,
    drainTimeoutMs: read.duration('drain-timeout', 1000)!,
    metrics: { port: read.int('metrics-port', 0, 65535)! },
  };
}

export function leaderElectionSettings(read: SettingReader): OperatorConfig['leaderElection'] {
  const enabled = read.bool('leader-elect');
  const leaseDurationMs = read.duration('leader-election-lease-duration', 1000);
  const renewDeadlineMs = read.duration('leader-election-renew-deadline', 1000);
  const retryPeriodMs = read.duration('leader-election-retry-period', 100);
  if (leaseDurationMs !== undefined && renewDeadlineMs !== undefined && leaseDurationMs <= renewDeadlineMs) {
    read.problem(
      'leader-election-lease-duration',
      'must be longer than --leader-election-renew-deadline ' +
        `(${leaseDurationMs / 1000}s is not longer than ${renewDeadlineMs / 1000}s)`,
    );
  }
  if (renewDeadlineMs !== undefined && retryPeriodMs !== undefined && renewDeadlineMs <= retryPeriodMs) {
    read.problem(
      'leader-election-renew-deadline',
      'must be longer than --leader-election-retry-period ' + `(${renewDeadlineMs / 1000}s is not longer than ${retryPeriodMs / 1000}s)`,
    );
  }
  const leaseName = read.str('leader-election-lease')!;
  if (!names.dnsSubdomain.test(leaseName)) {
    read.problem('leader-election-lease', `"${leaseName}" is not a valid object name (lower-case letters, digits, '-' and '.')`);
  }
  const namespace = read.str('leader-election-namespace') ?? podNamespace(read) ?? 'default';
  if (!names.dnsLabel.test(namespace)) read.problem('leader-election-namespace', `"${namespace}" is not a valid namespace name`);
  return {
    enabled: enabled!,
    namespace,
    leaseName,
    identity: read.str('leader-election-identity') ?? os.hostname(),
    leaseDurationMs: leaseDurationMs!,
    renewDeadlineMs: renewDeadlineMs!,
    retryPeriodMs: retryPeriodMs!,
  };
}

/** The namespace of the pod this runs in, from its ServiceAccount mount. */
function podNamespace(read: SettingReader): string | undefined {
  return read.optionalFile('/var/run/secrets/kubernetes.io/serviceaccount/namespace')?.trim() || undefined;
}

export function canarySettings(read: SettingReader): OperatorConfig['canary'] {
  const prometheusUrl = read.url('prometheus-url');
  const query = read.str('canary-query');
  const analysisIntervalMs = read.duration('canary-analysis-interval', 1000);
  const successChecks = read.int('canary-success-checks', 1, 100);
  const failureThreshold = read.int('canary-failure-threshold', 1, 100);
  const traffic = read.oneOf('canary-traffic', ['replicas', 'httproute'] as const);
  const latencyMetric = read.str('latency-metric');
  if (latencyMetric !== undefined && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(latencyMetric)) {
    read.problem('latency-metric', `"${latencyMetric}" is not a metric name`);
  }
  return {
    ...(prometheusUrl ? { prometheusUrl } : {}),
    ...(query ? { query } : {}),
    analysisIntervalMs: analysisIntervalMs!,
    successChecks: successChecks!,
    failureThreshold: failureThreshold!,
    traffic: traffic!,
    ...(latencyMetric ? { latencyMetric } : {}),
  };
}
