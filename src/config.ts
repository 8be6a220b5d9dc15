// The operator's configuration: flags and environment variables (a flag wins), validated as
// a whole before anything starts. Every problem is collected, each naming the setting, where
// its value came from and why it is wrong, so a user fixes them all in one go; the CLI then
// exits with code 2. The settings table (config-settings.ts) says what each setting is; the
// flags are read with parseArgs over it (config-flags.ts); each group of settings is checked
// by a validator of its own (config-process.ts, config-github.ts, config-previews.ts).
import type { PreviewTlsMode } from '../constructs/preview-tls.js';
import type { GitHubAuth } from './github/octokit-factory.js';
import type { PolicyConfig } from './policy/policy-config.js';
import type { PodSecurityLevel } from './synth/guard-pod-security.js';
import type { RenderPolicySettings } from './synth/guard-rendered-objects.js';
import { gitHubSettings, policySettings, resyncSettings, webhookSettings } from './config-github.js';
import { checkoutSettings, previewSettings, sandboxSettings } from './config-previews.js';
import { dashboardSettings } from './config-dashboard.js';
import { canarySettings, controllerSettings, leaderElectionSettings, processSettings } from './config-process.js';
import { SettingReader } from './config-reader.js';
import type { ControllerName } from './config-settings.js';
import type { LogLevel } from './logger.js';

export { controllerNames, type ControllerName } from './config-settings.js';

export interface OperatorConfig {
  kube: { kubeconfig?: string; context?: string };
  controllers: ControllerName[];
  /** Parallel reconciles per controller. */
  workers: { previewEnvironment: number; algorithm: number; database: number };
  /** Algorithms and Databases of this namespace only. */
  watchNamespace?: string;
  logLevel: LogLevel;
  drainTimeoutMs: number;
  leaderElection: {
    enabled: boolean;
    namespace: string;
    leaseName: string;
    identity: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  webhook: {
    host: string;
    port: number;
    path: string;
    /** Empty when the process takes no webhooks. */
    secrets: string[];
    maxBodyBytes: number;
    /** All the bodies being read at once, signed or not. */
    maxBodyBytesInFlight: number;
    dedupeWindowMs: number;
  };
  github: {
    baseUrl: string;
    /** Undefined when nothing in the process talks to GitHub. */
    auth?: GitHubAuth;
    throttle: boolean;
    maxRetryAfterSeconds: number;
  };
  /** The policy file with the budget flags applied, defaults filled in. */
  policy: PolicyConfig;
  git: { cacheDir: string; concurrency: number; timeoutMs: number; allowedProtocols: string[] };
  sandbox: { timeoutMs: number; maxHeapMb: number; maxRssMb: number; concurrency: number; rendererSocket?: string };
  previews: {
    domain: string;
    ingressClass: string;
    /** false: plain HTTP. `mode`: where certificates come from (constructs/preview-tls.ts). */
    tls: { issuer: { name: string; kind: 'ClusterIssuer' | 'Issuer' }; mode: PreviewTlsMode } | false;
    /** The wildcard certificate's Secret (the wildcard TLS modes). */
    tlsWildcardSecret?: { namespace: string; name: string };
    podSecurity: PodSecurityLevel;
    /** Only PreviewEnvironments matching this label selector. */
    environmentSelector?: string;
    /** Kinds a rendering may contain (`Kind` or `Kind.group`). */
    allowedKinds: string[];
    /** What the rendering policy allows beyond its strict defaults, and its limits. */
    renderPolicy: RenderPolicySettings;
  };
  canary: {
    prometheusUrl?: string;
    query?: string;
    analysisIntervalMs: number;
    successChecks: number;
    failureThreshold: number;
    traffic: 'replicas' | 'httproute';
    latencyMetric?: string;
  };
  resync: { intervalMs: number; maxDeletionsPerPass: number };
  metrics: { port: number };
  /** The read-only dashboard, on a port of its own. */
  dashboard: { enabled: boolean; port: number; host: string };
}

export interface ConfigIssue {
  /** `--flag` (and its environment variable). */
  setting: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    const problems = `${issues.length} problem${issues.length === 1 ? '' : 's'}`;
    super(`invalid configuration (${problems}):\n${issues.map((i) => `  ${i.setting}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** What the configuration is loaded for: each command needs different parts. */
export type ConfigPurpose = 'run' | 'synth' | 'renderer';

export interface LoadConfigOptions {
  /** Flags, e.g. `['--webhook-port=8080', '--controllers', 'algorithm']`. */
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  purpose: ConfigPurpose;
  /** Values that apply when neither a flag nor the environment sets them (e.g. `dev`'s embedded defaults). */
  defaults?: Readonly<Record<string, string>>;
  /** Reads files named by settings (default: the file system). */
  readFile?: (path: string) => string;
}

/** The configuration, or a ConfigError listing every problem. Reads the files settings name; starts nothing. */
export function loadConfig(options: LoadConfigOptions): OperatorConfig {
  const read = new SettingReader(options);
  const { controllers, needs } = controllerSettings(read, options.purpose);
  const config: OperatorConfig = {
    controllers,
    ...processSettings(read),
    leaderElection: leaderElectionSettings(read),
    webhook: webhookSettings(read, needs),
    github: gitHubSettings(read, needs),
    policy: policySettings(read)!,
    git: checkoutSettings(read),
    sandbox: sandboxSettings(read),
    previews: previewSettings(read, needs),
    canary: canarySettings(read),
    resync: resyncSettings(read),
    dashboard: dashboardSettings(read),
  };
  if (read.issues.length > 0) throw new ConfigError(read.issues);
  return config;
}
