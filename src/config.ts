// The operator's configuration: flags and environment variables (a flag wins), validated as
// a whole before anything starts. Every problem is collected, each naming the setting, where
// its value came from and why it is wrong, so a user fixes them all in one go; the CLI then
// exits with code 2.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parse as parseYaml } from 'yaml';
import type { GitHubAuth } from './github/octokit-factory.js';
import { parseDuration, ttlProblem } from './policy/budgets.js';
import type { PolicyConfig } from './policy/policy-config.js';
import { resolvePolicyConfig, validatePolicyConfig } from './policy/policy-validation.js';
import { AllowedKinds } from './synth/guard-allowed-kinds.js';
import { ingressAnnotationSettingProblem } from './synth/guard-ingress-annotations.js';
import { optionalServiceTypes, type OptionalServiceType } from './synth/guard-network-exposure.js';
import type { PodSecurityLevel } from './synth/guard-pod-security.js';
import type { RenderPolicySettings } from './synth/guard-rendered-objects.js';
import { controllerNames, settings, type ControllerName, type SettingSpec } from './config-settings.js';
import { logLevels, type LogLevel } from './logger.js';

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
    tls: { issuer: { name: string; kind: 'ClusterIssuer' | 'Issuer' } } | false;
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
}

export interface ConfigIssue {
  /** `--flag` (and its environment variable). */
  setting: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(readonly issues: ConfigIssue[]) {
    super(`invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${issues.map((i) => `  ${i.setting}: ${i.message}`).join('\n')}`);
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

interface RawValue {
  value: string;
  /** How the user wrote it, for messages: `--webhook-port=abc`, `PREVIEW_OPERATOR_WEBHOOK_PORT=abc`. */
  source: string;
}

/** Splits `--name=value`, `--name value` and a bare `--name` (true) into values; unknown flags are issues. */
export function parseFlags(args: readonly string[], known: ReadonlySet<string>, issues: ConfigIssue[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^--([a-z0-9-]+)(?:=(.*))?$/s.exec(arg);
    if (!match) {
      issues.push({ setting: arg, message: 'unexpected argument (settings are written --name=value)' });
      continue;
    }
    const [, name, inline] = match as unknown as [string, string, string | undefined];
    if (!known.has(name)) {
      issues.push({ setting: `--${name}`, message: 'unknown flag (see --help)' });
      if (inline === undefined && args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) i++;
      continue;
    }
    let value = inline;
    if (value === undefined) {
      const next = args[i + 1];
      const boolean = settings.find((s) => s.flag === name)?.kind === 'boolean';
      if (next !== undefined && !next.startsWith('--') && (!boolean || next === 'true' || next === 'false')) {
        value = next;
        i++;
      } else {
        value = 'true';
      }
    }
    if (values.has(name)) issues.push({ setting: `--${name}`, message: 'given more than once' });
    values.set(name, value);
  }
  return values;
}

/** The configuration, or a ConfigError listing every problem. Reads the files settings name; starts nothing. */
export function loadConfig(options: LoadConfigOptions): OperatorConfig {
  const issues: ConfigIssue[] = [];
  const flags = parseFlags(options.args, new Set(settings.map((s) => s.flag)), issues);
  const readFile = options.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const label = (s: SettingSpec) => `--${s.flag} (${s.env})`;

  const raw = (flag: string): RawValue | undefined => {
    const spec = settings.find((s) => s.flag === flag)!;
    const shown = (v: string) => (spec.kind === 'secret' ? '<hidden>' : v);
    const fromFlag = flags.get(flag);
    if (fromFlag !== undefined) return { value: fromFlag, source: `--${flag}=${shown(fromFlag)}` };
    const fromEnv = options.env[spec.env];
    // An empty variable counts as unset: Helm and Compose render unset values as "".
    if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: `${spec.env}=${shown(fromEnv)}` };
    const fallback = options.defaults?.[flag] ?? spec.default;
    return fallback === undefined ? undefined : { value: fallback, source: `default ${shown(fallback)}` };
  };
  const problem = (flag: string, message: string) => {
    issues.push({ setting: label(settings.find((s) => s.flag === flag)!), message });
  };
  const bad = (flag: string, v: RawValue, reason: string) => problem(flag, `${v.source}: ${reason}`);

  const str = (flag: string): string | undefined => raw(flag)?.value.trim() || undefined;
  const int = (flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    if (!/^-?\d+$/.test(v.value.trim())) return void bad(flag, v, 'must be a whole number');
    const n = Number(v.value);
    if (n < min || n > max) return void bad(flag, v, max === Number.MAX_SAFE_INTEGER ? `must be at least ${min}` : `must be between ${min} and ${max}`);
    return n;
  };
  const bool = (flag: string): boolean | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    if (v.value === 'true') return true;
    if (v.value === 'false') return false;
    return void bad(flag, v, 'must be true or false');
  };
  const duration = (flag: string, minMs = 1): number | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    let ms: number;
    try {
      ms = parseDuration(v.value.trim());
    } catch {
      return void bad(flag, v, 'must be a duration such as 30s, 5m or 1h30m (units ms, s, m, h)');
    }
    if (ms < minMs) return void bad(flag, v, `must be at least ${minMs >= 1000 ? `${minMs / 1000}s` : `${minMs}ms`}`);
    return ms;
  };
  const list = (flag: string): string[] => (raw(flag)?.value ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const url = (flag: string): string | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(v.value.trim());
    } catch {
      return void bad(flag, v, 'must be an absolute URL');
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return void bad(flag, v, 'must be an http(s) URL');
    return parsed.toString().replace(/\/$/, '');
  };
  const file = (flag: string): string | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    try {
      return readFile(v.value.trim());
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return void bad(flag, v, code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'the file is not readable (permission denied)' : `cannot read the file (${(err as Error).message})`);
    }
  };
  const oneOf = <T extends string>(flag: string, allowed: readonly T[]): T | undefined => {
    const v = raw(flag);
    if (!v) return undefined;
    if (!allowed.includes(v.value.trim() as T)) return void bad(flag, v, `must be one of: ${allowed.join(', ')}`);
    return v.value.trim() as T;
  };

  // Process
  const controllerValue = raw('controllers')!;
  const controllers = list('controllers');
  const unknownControllers = controllers.filter((c) => !controllerNames.includes(c as ControllerName));
  if (unknownControllers.length > 0) bad('controllers', controllerValue, `unknown controller${unknownControllers.length > 1 ? 's' : ''} ${unknownControllers.join(', ')} (known: ${controllerNames.join(', ')})`);
  else if (controllers.length === 0) bad('controllers', controllerValue, `name at least one of: ${controllerNames.join(', ')}`);
  const enabled = new Set(controllers as ControllerName[]);
  const run = options.purpose === 'run';
  const needsWebhook = run && enabled.has('webhook');
  const needsGitHub = run && (enabled.has('webhook') || enabled.has('resync') || enabled.has('preview-environment'));
  const needsPreviews = options.purpose === 'synth' || (run && enabled.has('preview-environment'));

  const watchNamespace = str('watch-namespace');
  if (watchNamespace !== undefined && !dnsLabel.test(watchNamespace)) problem('watch-namespace', `"${watchNamespace}" is not a valid namespace name`);
  const logLevel = oneOf('log-level', logLevels);
  const drainTimeoutMs = duration('drain-timeout', 1000);
  const metricsPort = int('metrics-port', 0, 65535);

  // Leader election
  const leaseDurationMs = duration('leader-election-lease-duration', 1000);
  const renewDeadlineMs = duration('leader-election-renew-deadline', 1000);
  const retryPeriodMs = duration('leader-election-retry-period', 100);
  if (leaseDurationMs !== undefined && renewDeadlineMs !== undefined && leaseDurationMs <= renewDeadlineMs) {
    problem('leader-election-lease-duration', `must be longer than --leader-election-renew-deadline (${leaseDurationMs / 1000}s is not longer than ${renewDeadlineMs / 1000}s)`);
  }
  if (renewDeadlineMs !== undefined && retryPeriodMs !== undefined && renewDeadlineMs <= retryPeriodMs) {
    problem('leader-election-renew-deadline', `must be longer than --leader-election-retry-period (${renewDeadlineMs / 1000}s is not longer than ${retryPeriodMs / 1000}s)`);
  }
  const leaseName = str('leader-election-lease')!;
  if (!dnsSubdomain.test(leaseName)) problem('leader-election-lease', `"${leaseName}" is not a valid object name (lower-case letters, digits, '-' and '.')`);
  const leaseNamespace = str('leader-election-namespace') ?? podNamespace(readFile) ?? 'default';
  if (!dnsLabel.test(leaseNamespace)) problem('leader-election-namespace', `"${leaseNamespace}" is not a valid namespace name`);

  // Webhook
  const webhookPort = int('webhook-port', 0, 65535);
  const webhookPath = str('webhook-path')!;
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$/.test(webhookPath)) problem('webhook-path', `"${webhookPath}" must be a URL path starting with /`);
  if (['/healthz', '/readyz', '/metrics'].includes(webhookPath)) problem('webhook-path', `${webhookPath} is taken by the operator itself`);
  const maxBodyBytes = int('webhook-max-body-bytes', 1024, 25 * 1024 * 1024);
  const dedupeWindowMs = duration('webhook-dedupe-window', 1000);
  const secretInline = raw('webhook-secret');
  const secretFile = file('webhook-secret-file');
  let secrets: string[] = [];
  if (secretInline && raw('webhook-secret-file')) problem('webhook-secret', 'give either --webhook-secret or --webhook-secret-file, not both');
  else if (secretInline) secrets = secretInline.value.split(',').map((s) => s.trim()).filter(Boolean);
  else if (secretFile !== undefined) {
    secrets = secretFile.split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
    if (secrets.length === 0) problem('webhook-secret-file', 'the file is empty');
  }
  if (needsWebhook && !secretInline && !raw('webhook-secret-file')) {
    problem('webhook-secret', 'required by the webhook controller: set --webhook-secret-file (or --webhook-secret); without it forged deliveries could not be told apart');
  }

  // GitHub
  const baseUrl = url('github-api-url');
  const appId = str('github-app-id');
  const installationId = int('github-app-installation-id', 1);
  const keyFileSet = raw('github-app-private-key-file') !== undefined;
  const privateKey = file('github-app-private-key-file');
  const tokenInline = str('github-token');
  const tokenFileSet = raw('github-token-file') !== undefined;
  const tokenFile = file('github-token-file');
  let auth: GitHubAuth | undefined;
  if (appId !== undefined && !/^\d+$/.test(appId)) problem('github-app-id', `${raw('github-app-id')!.source}: must be the App's numeric id`);
  if (privateKey !== undefined) {
    try {
      createPrivateKey(privateKey);
    } catch (err) {
      problem('github-app-private-key-file', `not a PEM private key (${(err as Error).message}); download one from the App's settings page`);
    }
  }
  const appParts = appId !== undefined || keyFileSet || installationId !== undefined;
  const tokenParts = tokenInline !== undefined || tokenFileSet;
  if (appParts && tokenParts) {
    problem('github-token', 'give either a GitHub App (--github-app-id, --github-app-private-key-file) or a token, not both');
  } else if (appParts) {
    if (appId === undefined) problem('github-app-id', 'required with --github-app-private-key-file');
    if (!keyFileSet) problem('github-app-private-key-file', 'required with --github-app-id');
    if (appId !== undefined && privateKey !== undefined && /^\d+$/.test(appId)) {
      auth = { type: 'app', appId: Number(appId), privateKey, ...(installationId !== undefined ? { installationId } : {}) };
    }
  } else if (tokenParts) {
    if (tokenInline !== undefined && tokenFileSet) problem('github-token', 'give either --github-token or --github-token-file, not both');
    else {
      const token = (tokenInline ?? tokenFile ?? '').trim();
      if (token) auth = { type: 'token', token };
      else if (tokenFile !== undefined) problem('github-token-file', 'the file is empty');
    }
  } else if (needsGitHub) {
    problem('github-app-id', `required by the ${[...enabled].filter((c) => c === 'webhook' || c === 'resync' || c === 'preview-environment').join(', ')} controller(s): a GitHub App (--github-app-id and --github-app-private-key-file) or a token (--github-token-file)`);
  }
  const throttle = bool('github-throttle');
  const maxRetryAfterMs = duration('github-max-retry-after', 1000);

  // Policy
  let policy: PolicyConfig | undefined;
  const policyText = file('policy-file');
  let policyInput: Record<string, unknown> = {};
  if (policyText !== undefined) {
    let parsed: unknown;
    try {
      parsed = parseYaml(policyText);
    } catch (err) {
      problem('policy-file', `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    for (const issue of validatePolicyConfig(parsed)) problem('policy-file', `${issue.path || '(root)'}: ${issue.message}`);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) policyInput = parsed as Record<string, unknown>;
  }
  const ttl = raw('default-ttl');
  if (ttl) {
    const reason = ttlProblem(ttl.value.trim());
    if (reason) bad('default-ttl', ttl, reason);
  }
  const cap = int('max-environments-per-repository', 0);
  if (issues.every((i) => !i.setting.startsWith('--policy-file'))) {
    const budgets = { ...((policyInput.budgets as Record<string, unknown> | undefined) ?? {}) };
    if (ttl && !ttlProblem(ttl.value.trim())) budgets.ttl = ttl.value.trim();
    if (cap !== undefined) budgets.maxEnvironmentsPerRepository = cap === 0 ? null : cap;
    try {
      policy = resolvePolicyConfig({ ...policyInput, budgets });
    } catch (err) {
      problem('policy-file', (err as Error).message);
    }
  }

  // Checkout, sandbox
  const cacheDir = str('checkout-cache-dir')!;
  if (!cacheDir.startsWith('/')) problem('checkout-cache-dir', `"${cacheDir}" must be an absolute path`);
  const gitConcurrency = int('git-concurrency', 1, 64);
  const gitTimeoutMs = duration('git-timeout', 1000);
  const protocols = list('git-allowed-protocols');
  const badProtocols = protocols.filter((p) => !['https', 'http', 'file'].includes(p));
  if (badProtocols.length > 0 || protocols.length === 0) problem('git-allowed-protocols', `${raw('git-allowed-protocols')!.source}: each must be https, http or file`);
  const sandboxTimeoutMs = duration('sandbox-timeout', 1000);
  const maxHeapMb = int('sandbox-max-heap-mb', 32, 16384);
  const maxRssMb = int('sandbox-max-rss-mb', 64, 32768);
  const sandboxConcurrency = int('sandbox-concurrency', 1, 64);
  if (maxHeapMb !== undefined && maxRssMb !== undefined && maxRssMb <= maxHeapMb) problem('sandbox-max-rss-mb', `must be larger than --sandbox-max-heap-mb (${maxRssMb} ≤ ${maxHeapMb}): the heap lives inside the resident memory`);

  // Previews
  const domain = str('preview-domain');
  if (domain !== undefined && !isDnsName(domain)) problem('preview-domain', `"${domain}" is not a DNS name (lower-case labels of letters, digits and '-', separated by dots)`);
  if (domain === undefined && needsPreviews && options.purpose === 'run') problem('preview-domain', 'required by the preview-environment controller: preview hosts are <repo>-pr-<n>.<domain>');
  const ingressClass = str('ingress-class')!;
  if (!dnsSubdomain.test(ingressClass)) problem('ingress-class', `"${ingressClass}" is not a valid IngressClass name`);
  const issuer = str('tls-issuer')!;
  const issuerKind = oneOf('tls-issuer-kind', ['ClusterIssuer', 'Issuer'] as const);
  if (issuer !== 'none' && !dnsSubdomain.test(issuer)) problem('tls-issuer', `"${issuer}" is not a valid issuer name (or "none")`);
  const environmentSelector = str('environment-selector');
  if (environmentSelector !== undefined && !/^[A-Za-z0-9._/=!,()\s-]+$/.test(environmentSelector)) problem('environment-selector', `"${environmentSelector}" is not a label selector (e.g. preview.alien6.io/shard=a)`);
  const podSecurity = oneOf('pod-security', ['restricted', 'baseline', 'privileged'] as const);
  const allowedKinds = list('allowed-kinds');
  try {
    new AllowedKinds(allowedKinds);
  } catch (err) {
    problem('allowed-kinds', (err as Error).message);
  }
  const serviceTypes = list('allowed-service-types');
  const badTypes = serviceTypes.filter((t) => !(optionalServiceTypes as readonly string[]).includes(t));
  if (badTypes.length > 0) problem('allowed-service-types', `${badTypes.join(', ')}: each must be LoadBalancer or NodePort (ClusterIP is always allowed, ExternalName never)`);
  const ingressAnnotations = list('allowed-ingress-annotations');
  for (const reason of ingressAnnotations.map(ingressAnnotationSettingProblem)) if (reason) problem('allowed-ingress-annotations', reason);
  const allowTokenAutomount = bool('allow-token-automount');
  const priorityClasses = list('allowed-priority-classes');
  for (const name of priorityClasses.filter((n) => !dnsSubdomain.test(n))) {
    problem('allowed-priority-classes', `"${name}" is not a PriorityClass name`);
  }
  const tolerationKeys = list('allowed-toleration-keys');
  for (const key of tolerationKeys.filter((k) => !qualifiedName.test(k))) {
    problem('allowed-toleration-keys', `"${key}" is not a taint key (prefix/name or name)`);
  }
  // Depth at most 1000: past the check, objects are cloned and serialised recursively.
  const limits = {
    maxObjects: int('max-rendered-objects', 1), maxBytes: int('max-rendered-bytes', 1024),
    maxObjectBytes: int('max-rendered-object-bytes', 1024), maxDepth: int('max-rendered-depth', 16, 1000),
  };

  // Canary analysis
  const prometheusUrl = url('prometheus-url');
  const query = str('canary-query');
  const analysisIntervalMs = duration('canary-analysis-interval', 1000);
  const successChecks = int('canary-success-checks', 1, 100);
  const failureThreshold = int('canary-failure-threshold', 1, 100);
  const traffic = oneOf('canary-traffic', ['replicas', 'httproute'] as const);
  const latencyMetric = str('latency-metric');
  if (latencyMetric !== undefined && !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(latencyMetric)) problem('latency-metric', `"${latencyMetric}" is not a metric name`);

  // Resync
  const resyncIntervalMs = duration('resync-interval', 10_000);
  const maxDeletions = int('resync-max-deletions', 0);
  const workers = {
    previewEnvironment: int('preview-environment-workers', 1, 256),
    algorithm: int('algorithm-workers', 1, 256),
    database: int('database-workers', 1, 256),
  };

  if (issues.length > 0) throw new ConfigError(issues);
  return {
    kube: { kubeconfig: str('kubeconfig'), context: str('context') },
    controllers: controllerNames.filter((c) => enabled.has(c)),
    workers: { previewEnvironment: workers.previewEnvironment!, algorithm: workers.algorithm!, database: workers.database! },
    ...(watchNamespace ? { watchNamespace } : {}),
    logLevel: logLevel!,
    drainTimeoutMs: drainTimeoutMs!,
    leaderElection: {
      enabled: bool('leader-elect')!,
      namespace: leaseNamespace,
      leaseName,
      identity: str('leader-election-identity') ?? os.hostname(),
      leaseDurationMs: leaseDurationMs!,
      renewDeadlineMs: renewDeadlineMs!,
      retryPeriodMs: retryPeriodMs!,
    },
    webhook: { host: str('webhook-host')!, port: webhookPort!, path: webhookPath, secrets, maxBodyBytes: maxBodyBytes!, dedupeWindowMs: dedupeWindowMs! },
    github: { baseUrl: baseUrl!, ...(auth ? { auth } : {}), throttle: throttle!, maxRetryAfterSeconds: maxRetryAfterMs! / 1000 },
    policy: policy!,
    git: { cacheDir, concurrency: gitConcurrency!, timeoutMs: gitTimeoutMs!, allowedProtocols: protocols.map((p) => `${p}:`) },
    sandbox: { timeoutMs: sandboxTimeoutMs!, maxHeapMb: maxHeapMb!, maxRssMb: maxRssMb!, concurrency: sandboxConcurrency!, rendererSocket: str('sandbox-renderer-socket') },
    previews: {
      domain: domain ?? 'preview.localhost',
      ingressClass,
      tls: issuer === 'none' ? false : { issuer: { name: issuer, kind: issuerKind! } },
      podSecurity: podSecurity!,
      ...(environmentSelector ? { environmentSelector } : {}),
      allowedKinds,
      renderPolicy: {
        allowedServiceTypes: serviceTypes as OptionalServiceType[], ingressAnnotations, allowTokenAutomount: allowTokenAutomount!,
        priorityClasses, tolerationKeys,
        limits: { maxObjects: limits.maxObjects!, maxBytes: limits.maxBytes!, maxObjectBytes: limits.maxObjectBytes!, maxDepth: limits.maxDepth! },
      },
    },
    canary: {
      ...(prometheusUrl ? { prometheusUrl } : {}),
      ...(query ? { query } : {}),
      analysisIntervalMs: analysisIntervalMs!,
      successChecks: successChecks!,
      failureThreshold: failureThreshold!,
      traffic: traffic!,
      ...(latencyMetric ? { latencyMetric } : {}),
    },
    resync: { intervalMs: resyncIntervalMs!, maxDeletionsPerPass: maxDeletions! },
    metrics: { port: metricsPort! },
  };
}

const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const dnsSubdomain = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label or taint key: an optional DNS-subdomain prefix and a name of up to 63 characters. */
const qualifiedName = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function isDnsName(name: string): boolean {
  return name.length <= 200 && name.split('.').every((label) => dnsLabel.test(label));
}

/** The namespace of the pod this runs in, from its ServiceAccount mount. */
function podNamespace(readFile: (path: string) => string): string | undefined {
  try {
    return readFile('/var/run/secrets/kubernetes.io/serviceaccount/namespace').trim() || undefined;
  } catch {
    return undefined;
  }
}
