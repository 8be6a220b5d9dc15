// What the PreviewEnvironment controller is told (PreviewEnvironmentControllerOptions, documented
// field by field) and the defaults it fills in, in one place: the reconciler reads `Settings`,
// never `options.x ?? default`.
import type { CertificateIssuer, DnsPeer, IngressControllerPeer, PodSecurityLevel, PreviewTlsMode } from '../../constructs/index.js';
import type { Reporter } from '../github/reporting/reporter.js';
import type { ChecksGate } from '../github/checks-gate.js';
import type { PreviewFileSource } from '../git/preview-files.js';
import { stderrLogger, systemClock, type Clock, type Logger } from '../kube/index.js';
import { defaultPolicySettings, type PolicyConfig } from '../policy/policy-config.js';
import { defaultAllowedKinds } from '../synth/guard-allowed-kinds.js';
import type { RenderPolicySettings } from '../synth/guard-rendered-objects.js';
import type { PreviewRenderSettings } from '../synth/render-preview.js';
import { Sandbox, type SandboxRunner } from '../synth/sandbox.js';
import type { RepositorySource } from './preview-environment-rendering.js';
import type { SecretRef } from './preview-environment-wildcard-tls.js';
import { defaultProgressIntervalMs } from './progress-pacer.js';

export interface PreviewEnvironmentControllerOptions {
  /** Tells people about their environment (the GitHub reporter in production). */
  reporter: Reporter;
  /** Checkouts of repositories at exact commits (for `.preview/main.ts`; and `.preview/` itself unless `previewFiles` is given). */
  repositories: RepositorySource;
  /** Where `.preview/` is read (default `repositories`, i.e. git; `run` reads it through GitHub's API). */
  previewFiles?: PreviewFileSource;
  /** Runs trusted repositories' `.preview/main.ts` (default: `new Sandbox()` with its default limits). */
  sandbox?: SandboxRunner;
  /** Environments are served at `<prefix>-pr-<n>-<repository hash>.<domain>`. */
  domain: string;
  /** IngressClass of every environment's Ingress (default `nginx`). */
  ingressClassName?: string;
  /**
   * The cert-manager issuer of the per-environment Certificates (default ClusterIssuer
   * `preview-issuer`); `false` serves every environment over plain HTTP without Certificates.
   * Without cert-manager in the cluster, environments are served over HTTP either way (with a
   * CertificateReady=False condition that says so).
   */
  tlsIssuer?: CertificateIssuer | false;
  /**
   * Where certificates come from (constructs/preview-tls.ts; default `per-preview`, a Certificate
   * each from `tlsIssuer`). `wildcard`: `tlsWildcardSecret` is copied into every environment's
   * namespace and kept in step; `ingress-default`: the ingress controller serves it as its default
   * certificate. Either wildcard mode serves TLS whether or not the cluster runs cert-manager, and
   * an environment is Ready once the certificate covers its host (preview-environment-wildcard-tls.ts).
   */
  tlsMode?: PreviewTlsMode;
  /** The Secret of the wildcard certificate for `*.<domain>` (required by the wildcard modes). */
  tlsWildcardSecret?: SecretRef;
  /**
   * Filters, trust and budgets, global with per-repository overrides (default
   * `defaultPolicySettings`: TTL 72h, no per-repository cap, OWNER/MEMBER/COLLABORATOR trusted).
   * Used here: `trust.associations` (whose PRs render their own configuration and code),
   * `budgets.ttl` and `budgets.maxTtl` (the default time to live and its cap; see `effectiveTtl`) and
   * `budgets.maxEnvironmentsPerRepository`.
   */
  policy?: PolicyConfig;
  /** Kinds a rendering may contain, `Kind` or `Kind.group`, namespaced only (default `defaultAllowedKinds`). */
  allowedKinds?: readonly string[];
  /** What the rendering policy allows beyond its strict defaults, and its limits (default `defaultRenderPolicySettings`). */
  renderPolicy?: RenderPolicySettings;
  /** Pod Security level enforced in (and checked for) every environment namespace (default `restricted`). */
  podSecurity?: PodSecurityLevel;
  /** Who may reach environments from outside their namespace (default the ingress-nginx namespace). */
  ingressController?: IngressControllerPeer;
  /** Where cluster DNS runs (default kube-dns in kube-system). */
  dns?: DnsPeer;
  /**
   * While an environment is deploying, how often its progress (the resources' readiness) is
   * written to status and reported to GitHub again (default 10 s; 0: on every change). A new
   * head SHA, readiness and every other change go out at once (progress-pacer.ts).
   */
  progressIntervalMs?: number;
  /**
   * How long a newly applied head SHA may come up before its Deploying state is written and
   * reported (default 5 s; 0: at once). One that is Ready within it is written once and its PR
   * comment is posted once, already saying ready — a write and three GitHub requests fewer.
   */
  deployingReportDelayMs?: number;
  /** An installation token for git (default: none, for public or local repositories). */
  gitToken?: (repository: { owner: string; name: string }) => Promise<string | undefined>;
  /**
   * Only PreviewEnvironments matching this label selector (default: all). For running two
   * operators side by side (a canary release, or tests sharing one cluster).
   */
  environmentSelector?: string;
  /**
   * Wait for CI: a head SHA other than the deployed one is deployed only once the gate says
   * `passed` (src/github/checks-gate.ts; its requirement per repository comes from
   * `checksRequirement(effectivePolicy(policy, repository))`). Default: no gate.
   */
  checksGate?: ChecksGate;
  /** How often a SHA waiting for checks is looked at again (default 30 s). */
  checksPollMs?: number;
  /** How often a SHA whose checks failed is looked at again (default 5 min). */
  checksFailedPollMs?: number;
  /**
   * Told, once per deployed SHA, how long after the webhook delivery behind it (the
   * receiver's `delivered-at` annotation) the SHA was applied and became Ready: the
   * operator's webhook → applied / webhook → ready histograms. Changes made without a
   * delivery (kubectl, resync) are not timed.
   */
  deliveryTiming?: { applied(seconds: number): void; ready(seconds: number): void };
  /** Parallel reconciles (default 12): each mostly waits on git, the API server and GitHub. */
  workers?: number;
  /** Sandbox runs at once, across the workers (default 2). */
  sandboxConcurrency?: number;
  /** Every environment is reconciled at least this often (default 10 min). */
  resyncPeriodMs?: number;
  /** How often an environment waiting for a Certificate looks again; cert-manager's objects are not watched (default 5 s). */
  certificatePollMs?: number;
  /**
   * The first poll of a namespace being deleted, besides its watch event (default 2 s); later polls
   * wait as long as it has been seen terminating, up to 30 s (or this, if longer).
   */
  namespacePollMs?: number;
  /** Attempts at telling GitHub an environment is gone before the teardown goes on without it (default 5). */
  maxTeardownReportAttempts?: number;
  logger?: Logger;
  /** The time TTLs are measured with (default the system clock). */
  clock?: Clock;
}

/** How long a new SHA deploys unreported unless it is Ready sooner (deployingReportDelayMs). */
export const defaultDeployingReportDelayMs = 5000;

/** The options that have a default. */
type Defaulted =
  | 'sandbox'
  | 'ingressClassName'
  | 'tlsMode'
  | 'policy'
  | 'allowedKinds'
  | 'podSecurity'
  | 'progressIntervalMs'
  | 'deployingReportDelayMs'
  | 'checksPollMs'
  | 'checksFailedPollMs'
  | 'workers'
  | 'sandboxConcurrency'
  | 'certificatePollMs'
  | 'namespacePollMs'
  | 'maxTeardownReportAttempts'
  | 'logger'
  | 'clock';

/** The options with every default filled in. */
export type Settings = PreviewEnvironmentControllerOptions & Required<Pick<PreviewEnvironmentControllerOptions, Defaulted>>;

/** `options` with the defaults their documentation names. */
export function withDefaults(options: PreviewEnvironmentControllerOptions): Settings {
  return {
    ...options,
    sandbox: options.sandbox ?? new Sandbox(),
    ingressClassName: options.ingressClassName ?? 'nginx',
    tlsMode: options.tlsMode ?? 'per-preview',
    policy: options.policy ?? { ...structuredClone(defaultPolicySettings), repositories: {} },
    allowedKinds: options.allowedKinds ?? defaultAllowedKinds,
    podSecurity: options.podSecurity ?? 'restricted',
    progressIntervalMs: options.progressIntervalMs ?? defaultProgressIntervalMs,
    deployingReportDelayMs: options.deployingReportDelayMs ?? defaultDeployingReportDelayMs,
    checksPollMs: options.checksPollMs ?? 30_000,
    // A re-run may still turn failed checks green: looked at again, less often.
    checksFailedPollMs: options.checksFailedPollMs ?? 5 * 60_000,
    workers: options.workers ?? 12,
    sandboxConcurrency: options.sandboxConcurrency ?? 2,
    certificatePollMs: options.certificatePollMs ?? 5000,
    namespacePollMs: options.namespacePollMs ?? 2000,
    maxTeardownReportAttempts: options.maxTeardownReportAttempts ?? 5,
    logger: options.logger ?? stderrLogger,
    clock: options.clock ?? systemClock,
  };
}

/** Whether TLS is served: wanted, and per preview only where the cluster runs cert-manager. */
export function servesTls(settings: Settings, certManagerInstalled: boolean): boolean {
  return settings.tlsIssuer !== false && (settings.tlsMode !== 'per-preview' || certManagerInstalled);
}

/** How an environment is rendered: over HTTP, or with TLS as `tlsMode` says (`tls`: see servesTls). */
export function renderSettings(settings: Settings, tls: boolean): PreviewRenderSettings {
  const issuer = settings.tlsIssuer || { name: 'preview-issuer', kind: 'ClusterIssuer' as const };
  const mode = settings.tlsMode;
  return {
    domain: settings.domain,
    ingressClassName: settings.ingressClassName,
    tls: tls ? { issuer, ...(mode === 'per-preview' ? {} : { mode }) } : false,
    podSecurity: settings.podSecurity,
    ingressController: settings.ingressController,
    dns: settings.dns,
  };
}
