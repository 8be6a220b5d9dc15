// The PreviewEnvironment controller: makes a pull request's environment exist at the PR's
// head commit, reports it, and removes it completely. One reconcile, level-triggered:
//
//   deleted?  → report destroyed (or expired) → delete the namespace → wait until gone → drop the finalizer
//   Expired at this head SHA and torn down? → nothing (zero writes)
//   finalizer → per-repository cap (else Queued) → TTL (else Expired: namespace deleted, object kept)
//   → guards put back where they drifted (watched: a deleted or edited one — the Namespace's own
//   labels and annotations, the NetworkPolicy, ResourceQuota, LimitRange, the default ServiceAccount — wakes its environment)
//   → wait for CI on a new head SHA (optional checks gate; the deployed SHA keeps serving)
//   → render at the head SHA (cached per generation and SHA) → policy → Namespace (owned by the
//   PreviewEnvironment) → a new rendering dry-run as a whole on the server (a refusal applies
//   nothing) → server-side apply → prune what left the rendering → readiness → status → report
//
// An unchanged environment costs reads only: every write (finalizer, apply, prune, status,
// events, GitHub) happens only when something differs. Problems a user can fix (configuration,
// sandbox, policy, rejected objects) become status conditions, an Event and PR comment lines,
// never a crash loop; transient ones throw and back off per key, counted in status.retryCount.
// status.lastReconciled moves only with another change of status (else every resync would write).
//
// Decisions: the namespace is the PreviewEnvironment's name and must be controlled by it (an
// existing namespace of someone else's is never touched, nor deleted); untrusted pull requests
// (fork, or association outside policy.trust.associations — the approval label lets the GitHub
// side create the environment, it does not make the PR's code trusted) render the base
// branch's configuration with only image tags from the PR, and their main.ts is never read;
// with cert-manager installed, Ready waits for the Certificate (see preview-environment-readiness.ts).
// An expiry sticks: the PR is still open, so the GitHub side would recreate a deleted object;
// the object stays in phase Expired with status.expiredSha, and only a new head SHA (a push)
// deploys again, with a fresh TTL. Deleting an Expired environment (PR closed) just drops the
// finalizer once the namespace is gone; GitHub was already told it expired (the teardown report
// repeats 'expired', which the reporter's hashes make a no-op), never 'destroyed'.
import {
  Applier, ConflictError, EventRecorder, ForbiddenError, InvalidError, NoKindMatchError, NotFoundError,
  addFinalizer, controllerReference, formatTime, groupOf, hasFinalizer, identityOf, refOf, removeCondition, removeFinalizer,
  jsonEqual, setCondition, stderrLogger, systemClock, toKubeError, updateStatus,
  type Clock, type Condition, type ConditionInput, type Controller, type EventFilter, type Informer, type KindRef,
  type KubeObject, type LiveObjects, type Logger, type Manager, type ObjectRef, type Ownership, type ReconcileContext, type ReconcileResult,
  type Reconciler,
} from '../kube/index.js';
import {
  ownershipLabelKeys, previewEnvironmentApiVersion,
  type CertificateIssuer, type DnsPeer, type IngressControllerPeer, type PodSecurityLevel, type PreviewEnvironmentSpec,
  type PreviewEnvironmentStatus, type ResourceReadiness,
} from '../../constructs/index.js';
import { ReportError, type EnvironmentReport, type EnvironmentState, type ReportedGitHubIds, type Reporter } from '../github/reporting/reporter.js';
import type { ChecksGate, ChecksVerdict } from '../github/checks-gate.js';
import type { PreviewFileSource } from '../git/preview-files.js';
import type { RepositoryCache } from '../git/repository-cache.js';
import { expiresAt as expiryAfter } from '../policy/budgets.js';
import { defaultPolicySettings, effectivePolicy, type EffectivePolicy, type PolicyConfig } from '../policy/policy-config.js';
import { AllowedKinds, defaultAllowedKinds, type GroupKind } from '../synth/guard-allowed-kinds.js';
import type { RenderPolicySettings } from '../synth/guard-rendered-objects.js';
import { Semaphore } from '../kube/semaphore.js';
import { Sandbox, type SandboxRunner } from '../synth/sandbox.js';
import type { PreviewRenderSettings } from '../synth/render-preview.js';
import { issuerProblems } from './certificate-issuers.js';
import { certificateCondition, environmentReadiness } from './preview-environment-readiness.js';
import { progressWait } from './progress-pacer.js';
import {
  renderEnvironment, type RenderedEnvironment, type RenderFailure, type RenderFailureKind, type RenderOutcome,
} from './preview-environment-rendering.js';
import { SlotLedger, type SlotEnvironment } from './preview-environment-slots.js';
import { environmentAnnotationKeys } from '../intake/environment-store.js';
import { repositoryKey } from '../github/octokit-factory.js';

export const previewEnvironmentKind: KindRef = { apiVersion: previewEnvironmentApiVersion, kind: 'PreviewEnvironment' };
/** Held until the environment's namespace is gone and GitHub was told. */
export const previewEnvironmentFinalizer = 'preview.alien6.io/teardown';

const namespaceKind: KindRef = { apiVersion: 'v1', kind: 'Namespace' };
const algorithmKind: KindRef = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' };
const databaseKind: KindRef = { apiVersion: 'mycompany.com/v1', kind: 'Database' };
const ingressKind: KindRef = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' };
/**
 * The namespace guards, cached so that an unchanged reconcile reads none of them from the API server
 * (ServiceAccounts: the `default` one is a guard; the repository's own are cached alongside).
 */
const guardCacheKinds: KindRef[] = [
  { apiVersion: 'v1', kind: 'ResourceQuota' }, { apiVersion: 'v1', kind: 'LimitRange' }, { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' },
  { apiVersion: 'v1', kind: 'ServiceAccount' },
];
const certificateKind: KindRef = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate' };
/** The namespace's guards, pruned with the rest though no repository may render them. */
const guardKinds: GroupKind[] = [{ group: '', kind: 'ResourceQuota' }, { group: '', kind: 'LimitRange' }, { group: 'networking.k8s.io', kind: 'NetworkPolicy' }];
/** The namespace's guards as the operator renders them (render-preview.ts): those kinds, and the `default` ServiceAccount. */
function isGuard(obj: KubeObject): boolean {
  if (obj.apiVersion === 'v1' && obj.kind === 'ServiceAccount') return obj.metadata.name === 'default';
  return guardKinds.some((g) => g.kind === obj.kind && g.group === groupOf(obj.apiVersion));
}
/** Versions of the kinds the default allow-list names; other groups' preferred version comes from discovery. */
const knownVersions: Record<string, string> = {
  '': 'v1', apps: 'apps/v1', batch: 'batch/v1', autoscaling: 'autoscaling/v2', policy: 'policy/v1',
  'networking.k8s.io': 'networking.k8s.io/v1', 'rbac.authorization.k8s.io': 'rbac.authorization.k8s.io/v1',
  'ai.alien6.io': 'ai.alien6.io/v1', 'mycompany.com': 'mycompany.com/v1', 'cert-manager.io': 'cert-manager.io/v1',
};
/** How soon an unreadable commit or repository is tried again. */
const sourceRetryMs = 30_000;
/** How long a rendering the API server refused is not dry-run again (a refusal may depend on the cluster: a quota, an account). */
const refusalRecheckMs = 60_000;
/** setTimeout fires at once beyond 2^31-1 ms; the periodic resync covers longer waits anyway. */
const maxRequeueMs = 6 * 3600_000;
/** How often a head SHA waiting for CI asks again (default; checks are polled, not watched). */
const defaultChecksPollMs = 30_000;
/** How often a head SHA whose checks failed asks again: a re-run may still turn it green. */
const defaultChecksFailedPollMs = 5 * 60_000;

export interface PreviewEnvironmentControllerOptions {
  /** Tells people about their environment (the GitHub reporter in production). */
  reporter: Reporter;
  /** Checkouts of repositories at exact commits (for `.preview/main.ts`; and `.preview/` itself unless `previewFiles` is given). */
  repositories: RepositoryCache;
  /** Where `.preview/` is read (default `repositories`, i.e. git; `run` reads it through GitHub's API). */
  previewFiles?: PreviewFileSource;
  /** Runs trusted repositories' `.preview/main.ts` (default: `new Sandbox()` with its default limits). */
  sandbox?: SandboxRunner;
  /** Environments are served at `<prefix>-pr-<n>.<domain>`. */
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
   * Filters, trust and budgets, global with per-repository overrides (default
   * `defaultPolicySettings`: TTL 72h, no per-repository cap, OWNER/MEMBER/COLLABORATOR trusted).
   * Used here: `trust.associations` (whose PRs render their own configuration and code),
   * `budgets.ttl` (the default time to live; spec.ttl and the repository's `ttl` win) and
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
  /** How long a namespace deletion is polled for, besides its watch event (default 2 s). */
  namespacePollMs?: number;
  /** Attempts at telling GitHub an environment is gone before the teardown goes on without it (default 5). */
  maxTeardownReportAttempts?: number;
  logger?: Logger;
  /** The time TTLs are measured with (default the system clock). */
  clock?: Clock;
}

/** What `registerPreviewEnvironmentController` returns (e.g. for a webhook to enqueue a key). */
export interface PreviewEnvironmentController {
  controller: Controller<EnvironmentObject>;
}

/** The status as this controller writes it (conditions typed as src/kube's, with their helpers). */
export interface EnvironmentStatus extends Omit<PreviewEnvironmentStatus, 'conditions'> {
  conditions?: Condition[];
}

export interface EnvironmentObject extends KubeObject {
  spec: PreviewEnvironmentSpec;
  status?: EnvironmentStatus;
}

const environmentLabel = ownershipLabelKeys.environment;

/** The environments' cache indexed by repository: every environment event asks for its siblings. */
const repositoryIndex = 'repository';

/** Registers the controller and its informers with the manager (before `manager.start()`). */
export function registerPreviewEnvironmentController(manager: Manager, options: PreviewEnvironmentControllerOptions): PreviewEnvironmentController {
  const environments = manager.informer<EnvironmentObject>(previewEnvironmentKind, options.environmentSelector ? { labelSelector: options.environmentSelector } : {});
  environments.addIndex(repositoryIndex, (e) => (e.spec?.repository ? [repositoryKey(e.spec.repository)] : []));
  const byEnvironment = { labelSelector: environmentLabel };
  const namespaces = manager.informer(namespaceKind, byEnvironment);
  // Unfiltered: the same caches as the Algorithm and Database controllers' in one process.
  const algorithms = manager.informer(algorithmKind);
  const databases = manager.informer(databaseKind);
  const ingresses = manager.informer(ingressKind, byEnvironment);
  const guards = guardCacheKinds.map((kind) => manager.informer(kind, byEnvironment));
  const reconciler = new PreviewEnvironmentReconciler(manager, options, { environments, namespaces, algorithms, databases, ingresses, guards });
  const labelled = (obj: KubeObject) => {
    const name = obj.metadata.labels?.[environmentLabel];
    return name ? [name] : [];
  };
  // Spec changes, deletion, and finalizer edits; our own status writes need no second look.
  const filter: EventFilter<EnvironmentObject> = (e) => e.type !== 'update'
    || e.old?.metadata.generation !== e.object.metadata.generation
    || e.old?.metadata.deletionTimestamp !== e.object.metadata.deletionTimestamp;
  const controller = manager.addController<EnvironmentObject>({
    name: 'preview-environment',
    for: environments,
    filter,
    owns: [namespaces],
    watches: [
      { informer: algorithms, map: labelled },
      { informer: databases, map: labelled },
      { informer: ingresses, map: labelled },
      // A guard deleted or edited by anyone else is put back at once, not at the next push.
      ...guards.map((informer) => ({ informer, map: (obj: KubeObject) => reconciler.driftedGuard(informer, obj) })),
      // A change to one environment of a repository (above all its deletion) may free a slot.
      { informer: environments as unknown as Informer<KubeObject>, map: (obj) => reconciler.queuedSiblings(obj as EnvironmentObject) },
    ],
    reconciler,
    workers: options.workers ?? 12,
    resyncPeriodMs: options.resyncPeriodMs,
  });
  return { controller };
}

interface Informers {
  environments: Informer<EnvironmentObject>;
  namespaces: Informer<KubeObject>;
  algorithms: Informer<KubeObject>;
  databases: Informer<KubeObject>;
  ingresses: Informer<KubeObject>;
  guards: Informer<KubeObject>[];
}

/** The freshest copy of the object this reconcile has seen (after its own writes). */
interface Current {
  env: EnvironmentObject;
  /** A status write still in flight (the Deploying claim): every later status write starts after it. */
  pendingStatus?: Promise<unknown>;
}

type Phase = NonNullable<PreviewEnvironmentStatus['phase']>;

const phaseState: Record<Phase, EnvironmentState> = {
  Pending: 'deploying', Queued: 'queued', Deploying: 'deploying', Ready: 'ready', Failed: 'failed', Expired: 'expired', Terminating: 'destroyed',
};

/** Condition types this controller owns. */
const conditionTypes = {
  ready: 'Ready',
  configValid: 'ConfigValid',
  policyCompliant: 'PolicyCompliant',
  certificateReady: 'CertificateReady',
  checksPassed: 'ChecksPassed',
  reconciled: 'Reconciled',
} as const;

const configFailureKinds = new Set<RenderFailureKind | 'NamespaceConflict' | 'ApplyRejected'>(['ConfigMissing', 'ConfigInvalid', 'SandboxFailed', 'RenderFailed', 'SourceUnavailable']);

interface Failure {
  kind: RenderFailureKind | 'NamespaceConflict' | 'ApplyRejected';
  message: string;
  details: string[];
}

class PreviewEnvironmentReconciler implements Reconciler {
  private readonly client;
  private readonly applier: Applier;
  private readonly events: EventRecorder;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly sandbox: SandboxRunner;
  private readonly sandboxRuns: Semaphore;
  private readonly allowedKinds: AllowedKinds;
  private readonly policy: PolicyConfig;
  private readonly slots = new SlotLedger();
  /** The last rendering per environment, keyed by uid, generation, head SHA and TLS mode. */
  private readonly renders = new Map<string, { key: string; outcome: RenderOutcome }>();
  /** The rendering whose leftovers were last pruned, per environment. */
  private readonly pruned = new Map<string, string>();
  /** The rendering last applied in full, per environment: a new one is dry-run first; its guards (and Namespace) are kept as applied. */
  private readonly applied = new Map<string, { key: string; namespace: KubeObject; objects: readonly KubeObject[] }>();
  /** A rendering the API server refused in its dry run, per environment: not dry-run again before `refusalRecheckMs`. */
  private readonly refusals = new Map<string, { key: string; failure: Failure; at: number }>();
  private readonly preferredVersions = new Map<string, string>();
  /** The object as this controller last wrote it, until the informer has caught up with the write. */
  private readonly written = new Map<string, EnvironmentObject>();

  constructor(manager: Manager, private readonly options: PreviewEnvironmentControllerOptions, private readonly informers: Informers) {
    this.client = manager.client;
    this.logger = options.logger ?? stderrLogger;
    this.clock = options.clock ?? systemClock;
    this.sandbox = options.sandbox ?? new Sandbox();
    this.sandboxRuns = new Semaphore(options.sandboxConcurrency ?? 2);
    this.allowedKinds = new AllowedKinds(options.allowedKinds ?? defaultAllowedKinds);
    this.policy = options.policy ?? { ...structuredClone(defaultPolicySettings), repositories: {} };
    this.events = new EventRecorder(this.client, { component: 'preview-operator', logger: this.logger });
    this.applier = new Applier(this.client, { lookup: (ref) => this.cached(ref) });
  }

  async reconcile(name: string, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const cached = this.informers.environments.get(name);
    if (!cached) {
      this.forget(name);
      return;
    }
    // A reconcile right after our own write must not work from the copy before it (it would
    // report with stale GitHub ids and create a second comment or deployment).
    const env = newer(this.written.get(name), cached);
    if (env === cached) this.written.delete(name);
    const current: Current = { env };
    try {
      if (env.metadata.deletionTimestamp) return await this.finalize(current, ctx);
      return await this.converge(current, ctx);
    } catch (err) {
      const kubeErr = toKubeError(err);
      if (!(kubeErr instanceof ConflictError) && !(kubeErr instanceof NotFoundError && current.env.metadata.deletionTimestamp)) {
        await this.recordRetry(current, ctx, err);
      } else {
        // The claim may still be in flight: the next reconcile of this key must start after it.
        await current.pendingStatus?.catch(() => {});
      }
      throw err;
    }
  }

  /** Keys of the Queued environments of `obj`'s repository (they may start when it changes). */
  queuedSiblings(obj: EnvironmentObject): string[] {
    if (!obj.spec?.repository) return [];
    return this.siblings(obj)
      .filter((e) => e.metadata.name !== obj.metadata.name && (e.status?.phase === 'Queued' || e.status?.phase === undefined))
      .map((e) => e.metadata.name!);
  }

  /**
   * The environment of a guard (NetworkPolicy, ResourceQuota, LimitRange, the default
   * ServiceAccount) that is no longer as last applied — deleted, edited, its label removed — so
   * that its reconcile puts it back. Our own writes, other ServiceAccounts, and guards of a
   * rendering not applied yet, wake nothing. (The Namespace wakes its owner through `owns`.)
   */
  driftedGuard(informer: Informer<KubeObject>, obj: KubeObject): string[] {
    const name = obj.metadata.labels?.[environmentLabel];
    const applied = name ? this.applied.get(name) : undefined;
    if (!name || !applied) return [];
    const ref = { ...refOf(obj), apiVersion: informer.kind.apiVersion, kind: informer.kind.kind };
    const desired = applied.objects.find((o) => identityOf(o) === identityOf(ref));
    if (!desired || !isGuard(desired)) return [];
    const live = informer.get(`${ref.namespace}/${ref.name}`);
    return live && this.applier.isApplied({ ...live, ...informer.kind }, desired, { label: environmentLabel, value: name }) ? [] : [name];
  }

  // ---- converge ------------------------------------------------------------------------

  private async converge(current: Current, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const name = current.env.metadata.name!;
    const expiredHere = current.env.status?.phase === 'Expired' && current.env.status.expiredSha === current.env.spec.pullRequest.headSha;
    if (expiredHere) return this.stayExpired(current, ctx);
    const withFinalizer = await addFinalizer(this.client, current.env, previewEnvironmentFinalizer);
    if (withFinalizer !== current.env) this.written.set(name, withFinalizer);
    current.env = withFinalizer;
    const env = current.env;
    const policy = effectivePolicy(this.policy, env.spec.repository);
    const now = this.clock.now();

    const decision = this.slots.decide(name, this.siblings(env).map(slotFacts), policy.budgets.maxEnvironmentsPerRepository);
    if (!decision.admitted) {
      const message = `waiting for a free slot: ${policy.repository} may run ${decision.cap} environment${decision.cap === 1 ? '' : 's'} at once; position ${decision.position} in the queue`;
      return this.settle(current, ctx, {
        phase: 'Queued', ready: { status: 'False', reason: 'Queued', message }, reasons: [message],
      });
    }

    const memo = this.renders.get(name);
    const configTtl = memo?.outcome.ok ? memo.outcome.rendered.config.ttl : undefined;
    // Out of Expired by a new head SHA: its TTL starts when it is deployed.
    const expiry = env.status?.phase === 'Expired' ? undefined : this.expiry(env, configTtl, policy, memo !== undefined);
    if (expiry !== undefined && now >= expiry.getTime()) return this.expire(current, ctx, expiry, policy, configTtl);

    // Whatever this reconcile goes on to do (wait for checks, fail to render, be refused), the
    // guards of what serves are put back if they drifted.
    await this.repairGuards(env);
    if (this.options.checksGate && (env.status?.phase === 'Expired' || env.spec.pullRequest.headSha !== env.status?.deployedSha)) {
      const verdict = await this.options.checksGate.state(env.spec.repository, env.spec.pullRequest.headSha);
      if (verdict.state !== 'passed') return this.holdForChecks(current, ctx, verdict, expiry);
    }

    const liveNamespace = await this.liveNamespace(name);
    if (liveNamespace && !isControlledBy(liveNamespace, env)) {
      return this.fail(current, ctx, {
        kind: 'NamespaceConflict',
        message: `namespace ${name} exists and does not belong to this PreviewEnvironment; it is left untouched`,
        details: [`namespace ${name} already exists and belongs to something else`],
      }, expiry);
    }
    if (liveNamespace?.metadata.deletionTimestamp) {
      // Deleted by hand (or by a previous life of this environment): recreated once gone.
      const message = `namespace ${name} is being deleted; it is recreated once it is gone`;
      await this.settle(current, ctx, { phase: 'Pending', ready: { status: 'False', reason: 'NamespaceTerminating', message }, reasons: [message] });
      return { requeueAfter: this.options.namespacePollMs ?? 2000 };
    }

    // Rendering (reading .preview/, at most a checkout) changes nothing in the cluster: started
    // now, it overlaps the claim's status write below.
    const tlsWanted = this.options.tlsIssuer !== false;
    const certManagerInstalled = tlsWanted && (await this.client.discovery.has(certificateKind));
    const rendering = this.render(env, certManagerInstalled, policy);
    rendering.catch(() => {});

    // Claim the slot in status, so other replicas of the decision see it. The write overlaps the
    // rendering and the apply (a claim lost to a conflict fails the reconcile after the apply,
    // before anything is pruned); later status writes wait for it (settle).
    const claiming = !holdsPhase(env.status?.phase);
    const claim = !claiming ? Promise.resolve() : this.settle(current, ctx, {
      phase: 'Deploying',
      ready: { status: 'False', reason: 'Rendering', message: `rendering ${env.spec.pullRequest.headSha.slice(0, 12)}` },
      reasons: [],
      report: false,
    });
    claim.catch(() => {});
    current.pendingStatus = claim;

    const timings: Record<string, number> = {};
    let mark = performance.now();
    const lap = (step: string) => {
      const t = performance.now();
      timings[step] = Math.round(t - mark);
      mark = t;
    };
    const outcome = await rendering;
    if (!outcome.ok) {
      const result = await this.fail(current, ctx, outcome.failure, this.expiry(current.env, configTtl, policy, true));
      if (outcome.failure.kind !== 'SourceUnavailable') return result;
      return { requeueAfter: Math.min(result.requeueAfter ?? sourceRetryMs, sourceRetryMs) };
    }
    const rendered = outcome.rendered;

    const unserved: string[] = [];
    for (const obj of rendered.objects) if (!(await this.client.discovery.has(obj))) unserved.push(`${obj.kind} (${obj.apiVersion})`);
    if (unserved.length > 0) {
      const kinds = [...new Set(unserved)];
      return this.fail(current, ctx, {
        kind: 'ApplyRejected',
        message: `the cluster does not serve ${kinds.join(', ')}; nothing was applied`,
        details: kinds.map((k) => `the cluster does not serve ${k}`),
      }, this.expiry(current.env, rendered.config.ttl, policy, true));
    }

    lap('render');
    const ownership = { label: environmentLabel, value: name };
    const refused = await this.applyRendering(current.env, rendered, ownership, liveNamespace);
    if (refused) return this.fail(current, ctx, refused, this.expiry(current.env, rendered.config.ttl, policy, true));
    // A claim that failed (a conflict) fails this reconcile here, before anything is pruned.
    await claim;

    const renderKey = this.renders.get(name)?.key ?? '';
    lap('apply');
    // A namespace created just now holds nothing of ours to prune.
    if (!liveNamespace) this.pruned.set(name, renderKey);
    if (this.pruned.get(name) !== renderKey) {
      const deleted = await this.applier.prune({
        ownership, keep: rendered.objects, kinds: await this.pruneKinds(), namespaces: [name],
      });
      if (deleted.length > 0) this.logger.info({ environment: name, deleted: deleted.map((r) => `${r.kind}/${r.name}`) }, 'pruned objects that left the rendering');
      this.pruned.set(name, renderKey);
    }

    lap('prune');
    const applied = rendered.objects.map(refOf);
    const certificates = applied.filter((r) => r.kind === 'Certificate');
    const liveCertificates = new Map<string, KubeObject>();
    for (const ref of certificates) {
      const live = await this.client.get(ref).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
      if (live) liveCertificates.set(identityOf(ref), live);
    }
    const issuers = await issuerProblems(this.client, liveCertificates);
    const readiness = environmentReadiness(
      applied, (ref) => (ref.kind === 'Certificate' ? liveCertificates.get(identityOf(ref)) : this.cached(ref)), rendered.identity.host,
      (ref) => issuers.get(identityOf(ref)),
    );

    const previous = current.env.status ?? {};
    // A new SHA, or the same one out of Expired, starts a fresh TTL.
    const redeployed = previous.phase === 'Expired' || previous.deployedSha !== rendered.sha;
    const lastDeployedAt = !redeployed && previous.lastDeployedAt ? previous.lastDeployedAt : formatTime(new Date(now));
    const ttl = current.env.spec.ttl ?? rendered.config.ttl ?? policy.budgets.ttl;
    const expiresAt = expiryAfter(lastDeployedAt, ttl);
    const notReady = readiness.resources.filter((r) => !r.ready);
    const certificate = tlsWanted
      ? certificateCondition(certManagerInstalled, certificates.length > 0, readiness.resources.filter((r) => r.kind === 'Certificate'))
      : undefined;

    this.timeDelivery(current.env, now, redeployed, readiness.ready && (redeployed || previous.phase !== 'Ready'));

    // More progress of a deploy already written and reported: again at the end of the interval.
    // Not after this reconcile's claim (nothing reported yet), nor while a failure is recorded
    // (a report that failed is retried with the controller's backoff, not at the pace of progress).
    const progressOnly = !readiness.ready && !claiming && !previous.retryCount;
    const wait = progressOnly ? progressWait(previous, rendered.sha, this.clock.now(), this.options.progressIntervalMs ?? 10_000) : 0;
    if (wait > 0) {
      this.logger.debug({ environment: name, ms: timings, progressWait: wait }, 'reconciled; progress written at the end of the interval');
      return { requeueAfter: clampRequeue(Math.min(expiresAt.getTime() - this.clock.now(), wait)) };
    }
    await this.settle(current, ctx, {
      phase: readiness.ready ? 'Ready' : 'Deploying',
      ready: readiness.ready
        ? { status: 'True', reason: 'Ready', message: `${rendered.sha.slice(0, 12)} serves at ${rendered.url ?? 'no URL (nothing is routed)'}` }
        : { status: 'False', reason: 'WaitingForResources', message: notReady.map((r) => `${r.kind} ${r.name}: ${r.message ?? 'not ready'}`).join('; ') },
      configValid: { status: 'True', reason: 'Valid', message: `${rendered.configSource.from === 'head' ? 'configuration of the head commit' : `configuration of the base branch ${rendered.configSource.branch} (untrusted pull request)`}, rendered by ${rendered.renderer === 'sandbox' ? '.preview/main.ts in the sandbox' : 'the construct library'}` },
      policyCompliant: { status: 'True', reason: 'Compliant', message: `${rendered.objects.length} objects passed the policy and were applied` },
      certificate: certificate ?? null,
      checks: this.options.checksGate ? { status: 'True', reason: 'ChecksPassed', message: `the checks of ${rendered.sha.slice(0, 12)} passed` } : undefined,
      fields: {
        namespace: name, url: rendered.url, deployedSha: rendered.sha, lastDeployedAt, expiresAt: formatTime(expiresAt), resources: readiness.resources,
      },
      reasons: rendered.notes,
    });

    lap('status');
    this.logger.debug({ environment: name, phase: current.env.status?.phase, ms: timings }, 'reconciled');
    const waits = [expiresAt.getTime() - this.clock.now()];
    if (certManagerInstalled && certificate?.status === 'False') waits.push(this.options.certificatePollMs ?? 5000);
    return { requeueAfter: clampRequeue(Math.min(...waits)) };
  }

  /**
   * The namespace and the rendering: a new one (another render key than the last applied) all or
   * nothing, through a dry run of the whole set before its first write. A refusal by the API
   * server is returned; what served before keeps serving, its namespace's annotations included.
   */
  private async applyRendering(
    env: EnvironmentObject, rendered: RenderedEnvironment, ownership: Ownership, liveNamespace: KubeObject | undefined,
  ): Promise<Failure | undefined> {
    const name = env.metadata.name!;
    const key = this.renders.get(name)?.key ?? '';
    const namespace = { ...rendered.namespace, metadata: { ...rendered.namespace.metadata, ownerReferences: [controllerReference(env)] } };
    try {
      // A namespace to create comes first: the operator's own object, and nothing can be dry-run in it before.
      const [created] = liveNamespace ? [] : await this.applier.apply([namespace], { ownership });
      // In a namespace created just now nothing can exist yet: no read before each apply.
      const fresh = created?.action === 'created';
      const checked = this.applied.get(name)?.key === key ? undefined : await this.dryRunRendering(env, key, rendered, ownership, fresh);
      if (checked && 'refused' in checked) return checked.refused;
      if (liveNamespace) await this.applier.apply([namespace], { ownership });
      // What the dry run could not judge may still be refused: the objects this apply created go again.
      await this.applier.apply(rendered.objects, { ownership, fresh, live: checked?.live, undoCreated: true });
      this.applied.set(name, { key, namespace, objects: rendered.objects });
      this.refusals.delete(name);
      return undefined;
    } catch (err) {
      const rejected = describeRejection(err);
      if (!rejected) throw err;
      // Refused at a real write (what the dry run could not judge): what it created is gone again,
      // and like a dry run's refusal it is not tried again before `refusalRecheckMs`.
      const undone = `${rendered.sha.slice(0, 12)} is not applied (what it created was deleted again)`;
      const failure = { ...rejected, message: `${rejected.message}; ${undone}` };
      this.refusals.set(name, { key, failure, at: this.clock.now() });
      return failure;
    }
  }

  /**
   * The server-side dry run of a new rendering: every object it would write, at once (extra
   * requests: one dry-run apply per object written). A refusal is kept for its render key and
   * reused for `refusalRecheckMs`, so the events of what still serves do not dry-run it again.
   */
  private async dryRunRendering(
    env: EnvironmentObject, key: string, rendered: RenderedEnvironment, ownership: Ownership, fresh: boolean,
  ): Promise<{ live: LiveObjects } | { refused: Failure }> {
    const name = env.metadata.name!;
    const known = this.refusals.get(name);
    if (known?.key === key && this.clock.now() - known.at < refusalRecheckMs) return { refused: known.failure };
    try {
      return { live: await this.applier.dryRunWrites(rendered.objects, { ownership, fresh }) };
    } catch (err) {
      const rejected = describeRejection(err);
      if (!rejected) throw err;
      const serving = env.status?.deployedSha ? `; ${env.status.deployedSha.slice(0, 12)} keeps serving` : '';
      const failure = { ...rejected, message: `${rejected.message}; nothing of ${rendered.sha.slice(0, 12)} was applied${serving}` };
      this.refusals.set(name, { key, failure, at: this.clock.now() });
      return { refused: failure };
    }
  }

  /**
   * Puts the Namespace (its labels and annotations: Pod Security, ownership) and its guards back
   * as last applied where they drifted (the cache tells, so this reads nothing while they are
   * intact; a Namespace that lost its label is read). Only in a namespace this environment
   * controls, and only once this process applied a rendering to it (after a restart: from its first apply).
   */
  private async repairGuards(env: EnvironmentObject): Promise<void> {
    const name = env.metadata.name!;
    const applied = this.applied.get(name);
    const namespace = applied && (await this.liveNamespace(name));
    if (!applied || !namespace || namespace.metadata.deletionTimestamp || !isControlledBy(namespace, env)) return;
    const guards = [applied.namespace, ...applied.objects.filter((o) => isGuard(o))];
    const results = await this.applier.apply(guards, { ownership: { label: environmentLabel, value: name } });
    const repaired = results.filter((r) => r.action !== 'unchanged').map((r) => `${r.ref.kind}/${r.ref.name}`);
    if (repaired.length > 0) this.logger.info({ environment: name, repaired }, 'guards put back');
  }

  private timeDelivery(env: EnvironmentObject, now: number, applied: boolean, ready: boolean): void {
    const timing = this.options.deliveryTiming;
    const deliveredAt = Date.parse(env.metadata.annotations?.[environmentAnnotationKeys.deliveredAt] ?? '');
    if (!timing || Number.isNaN(deliveredAt) || deliveredAt > now) return;
    const seconds = (now - deliveredAt) / 1000;
    if (applied) timing.applied(seconds);
    if (ready) timing.ready(seconds);
  }

  private async render(env: EnvironmentObject, certManagerInstalled: boolean, policy: EffectivePolicy): Promise<RenderOutcome> {
    const name = env.metadata.name!;
    const key = `${env.metadata.uid}/${env.metadata.generation}/${env.spec.pullRequest.headSha}/${certManagerInstalled ? 'tls' : 'plain'}`;
    const memo = this.renders.get(name);
    if (memo?.key === key) return memo.outcome;
    const settings: PreviewRenderSettings = {
      domain: this.options.domain,
      ingressClassName: this.options.ingressClassName ?? 'nginx',
      tls: certManagerInstalled && this.options.tlsIssuer !== false ? { issuer: this.options.tlsIssuer ?? { name: 'preview-issuer', kind: 'ClusterIssuer' } } : false,
      podSecurity: this.options.podSecurity ?? 'restricted',
      ingressController: this.options.ingressController,
      dns: this.options.dns,
    };
    const started = performance.now();
    const token = await this.options.gitToken?.({ owner: env.spec.repository.owner, name: env.spec.repository.name });
    const outcome = await renderEnvironment(
      { name, spec: env.spec, settings, trust: policy.trust, allowedKinds: this.allowedKinds, renderPolicy: this.options.renderPolicy, token },
      { repositories: this.options.repositories, files: this.options.previewFiles, sandbox: this.sandbox, sandboxRuns: this.sandboxRuns },
    );
    this.logger.info({
      environment: name, sha: env.spec.pullRequest.headSha, ms: Math.round(performance.now() - started),
      ...(outcome.ok ? { renderer: outcome.rendered.renderer, objects: outcome.rendered.objects.length } : { failure: outcome.failure.kind }),
    }, 'rendered');
    // A commit or repository that cannot be read may become readable (a push still propagating,
    // access granted): that failure is looked at again, everything else is a function of the key.
    if (outcome.ok || outcome.failure.kind !== 'SourceUnavailable') this.renders.set(name, { key, outcome });
    return outcome;
  }

  // ---- outcomes --------------------------------------------------------------------------

  private async fail(current: Current, ctx: ReconcileContext, failure: RenderFailure | Failure, expiry: Date | undefined): Promise<ReconcileResult> {
    const isConfig = configFailureKinds.has(failure.kind);
    await this.settle(current, ctx, {
      phase: 'Failed',
      ready: { status: 'False', reason: failure.kind, message: failure.message },
      configValid: isConfig ? { status: 'False', reason: failure.kind, message: failure.message } : undefined,
      policyCompliant: isConfig ? undefined : { status: 'False', reason: failure.kind, message: failure.message },
      fields: expiry ? { expiresAt: formatTime(expiry) } : {},
      reasons: failure.details,
    });
    return expiry ? { requeueAfter: clampRequeue(expiry.getTime() - this.clock.now()) } : {};
  }

  private async expire(current: Current, ctx: ReconcileContext, expiry: Date, policy: EffectivePolicy, configTtl: string | undefined): Promise<ReconcileResult | void> {
    const env = current.env;
    const ttl = env.spec.ttl ?? configTtl ?? policy.budgets.ttl;
    const since = env.status?.lastDeployedAt ?? env.metadata.creationTimestamp;
    const message = `expired at ${formatTime(expiry)}: no new commit was deployed within its time to live of ${ttl} (last deployment ${since})`;
    try {
      await this.settle(current, ctx, {
        phase: 'Expired', ready: { status: 'False', reason: 'Expired', message }, reasons: [message],
        certificate: null,
        fields: { expiredSha: env.spec.pullRequest.headSha, url: undefined, resources: undefined },
      });
    } finally {
      // Even when GitHub could not be told now (the next reconcile tells it again).
      await this.tearDownNamespace(current.env);
    }
    return this.stayExpired(current, ctx);
  }

  /**
   * Phase Expired at the expired SHA: the namespace goes (polled until gone), then nothing
   * happens — no write — until a new head SHA or the deletion. A report that failed is retried.
   */
  private async stayExpired(current: Current, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const env = current.env;
    const name = env.metadata.name!;
    if ((env.status?.retryCount ?? 0) > 0) {
      const message = findReadyMessage(env);
      await this.settle(current, ctx, { phase: 'Expired', ready: { status: 'False', reason: 'Expired', message }, reasons: [message] });
    }
    if (await this.tearDownNamespace(current.env)) return { requeueAfter: this.options.namespacePollMs ?? 2000 };
    // Torn down: it holds no slot any more (a Queued sibling may start).
    this.forget(name);
  }

  /** Deletes the environment's namespace (only if it controls it); true while it still exists. */
  private async tearDownNamespace(env: EnvironmentObject): Promise<boolean> {
    const name = env.metadata.name!;
    const namespace = await this.liveNamespace(name);
    if (!namespace || !isControlledBy(namespace, env)) return false;
    if (!namespace.metadata.deletionTimestamp) {
      await this.client.delete(refOf(namespace), { preconditions: { uid: namespace.metadata.uid } }).catch((err) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      this.logger.info({ environment: name }, 'teardown: namespace deleted');
    }
    return true;
  }

  /** The head SHA's checks have not passed: what is deployed keeps serving, nothing is applied. */
  private async holdForChecks(current: Current, ctx: ReconcileContext, verdict: ChecksVerdict, expiry: Date | undefined): Promise<ReconcileResult> {
    const env = current.env;
    const sha = env.spec.pullRequest.headSha.slice(0, 12);
    const previous = env.status ?? {};
    const serving = previous.deployedSha !== undefined && (previous.phase === 'Ready' || previous.phase === 'Deploying');
    const failed = verdict.state === 'failed';
    const reason = failed ? 'ChecksFailed' : 'WaitingForChecks';
    const message = failed
      ? `${sha} is not deployed: ${verdict.message}`
      : `${sha} waits for its checks (${verdict.message})${previous.deployedSha ? `; ${previous.deployedSha.slice(0, 12)} keeps serving` : ''}`;
    await this.settle(current, ctx, {
      phase: failed ? 'Failed' : serving ? previous.phase! : 'Pending',
      state: failed ? 'failed' : 'waiting-for-checks',
      // The Ready condition keeps describing what serves, unless nothing does or the SHA failed.
      ready: failed || !serving ? { status: 'False', reason, message } : undefined,
      checks: { status: 'False', reason, message },
      reasons: [message],
    });
    const wait = failed ? (this.options.checksFailedPollMs ?? defaultChecksFailedPollMs) : (this.options.checksPollMs ?? defaultChecksPollMs);
    return { requeueAfter: clampRequeue(expiry ? Math.min(wait, expiry.getTime() - this.clock.now()) : wait) };
  }

  // ---- teardown --------------------------------------------------------------------------

  private async finalize(current: Current, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const env = current.env;
    const name = env.metadata.name!;
    if (!hasFinalizer(env, previewEnvironmentFinalizer)) return;
    const expired = env.status?.phase === 'Expired';
    const reason = expired ? findReadyMessage(env) : 'the preview environment was deleted';
    try {
      await this.settle(current, ctx, {
        phase: expired ? 'Expired' : 'Terminating',
        ready: expired
          ? { status: 'False', reason: 'Expired', message: reason }
          : { status: 'False', reason: 'Terminating', message: `deleting namespace ${name}` },
        reasons: [reason],
      });
    } catch (err) {
      const attempts = this.options.maxTeardownReportAttempts ?? 5;
      if (!(err instanceof ReportFailed) || ctx.retries + 1 < attempts) throw err;
      this.logger.warn({ environment: name, attempts, err: err.message }, 'teardown: GitHub could not be told; going on without it');
    }

    if (await this.tearDownNamespace(current.env)) return { requeueAfter: this.options.namespacePollMs ?? 2000 };
    // Free the slot before the object goes: until then its deletionTimestamp holds it.
    this.forget(name);
    await removeFinalizer(this.client, current.env, previewEnvironmentFinalizer);
  }

  // ---- status and report -----------------------------------------------------------------

  /**
   * Writes the status (when it differs) and reports to GitHub; one place, so that status,
   * events and the report always tell the same story.
   */
  private async settle(current: Current, ctx: ReconcileContext, outcome: Outcome): Promise<void> {
    await current.pendingStatus?.catch(() => {});
    const env = current.env;
    const previous = env.status ?? {};
    const now = new Date(this.clock.now());
    const generation = env.metadata.generation;
    let conditions = previous.conditions ?? [];
    const set = (type: string, input: Omit<ConditionInput, 'type' | 'observedGeneration'> | undefined) => {
      if (input) conditions = setCondition(conditions, { type, ...input, observedGeneration: generation }, now);
    };
    set(conditionTypes.ready, outcome.ready);
    set(conditionTypes.configValid, outcome.configValid);
    set(conditionTypes.policyCompliant, outcome.policyCompliant);
    set(conditionTypes.checksPassed, outcome.checks);
    if (outcome.certificate === null) conditions = removeCondition(conditions, conditionTypes.certificateReady);
    else set(conditionTypes.certificateReady, outcome.certificate);
    set(conditionTypes.reconciled, { status: 'True', reason: 'Reconciled', message: 'the last reconcile succeeded' });

    const status: EnvironmentStatus = {
      ...previous,
      ...outcome.fields,
      phase: outcome.phase,
      observedGeneration: generation,
      retryCount: 0,
      conditions,
    };

    let reportError: unknown;
    if (outcome.report !== false) {
      const input: EnvironmentReport = {
        repository: { owner: env.spec.repository.owner, name: env.spec.repository.name },
        pullRequest: env.spec.pullRequest.number,
        headSha: env.spec.pullRequest.headSha,
        state: outcome.state ?? phaseState[outcome.phase],
        ...(outcome.phase === 'Ready' && status.url ? { url: status.url } : {}),
        ...(status.deployedSha ? { deployedSha: status.deployedSha } : {}),
        resources: (status.resources ?? []).map((r: ResourceReadiness) => ({ kind: r.kind, name: r.name, ready: r.ready, ...(r.message ? { message: r.message } : {}) })),
        reasons: outcome.reasons,
        known: previous.github ?? {},
      };
      try {
        status.github = definedOnly(await this.options.reporter.report(input));
      } catch (err) {
        reportError = err;
        if (err instanceof ReportError) status.github = definedOnly(err.partial);
        status.retryCount = ctx.retries + 1;
        conditions = setCondition(conditions, { type: conditionTypes.reconciled, status: 'False', reason: 'ReportFailed', message: `reporting to GitHub failed: ${(err as Error).message}`, observedGeneration: generation }, now);
        status.conditions = conditions;
      }
    }
    await this.writeStatus(current, status, now);
    if (previous.phase !== outcome.phase) this.recordTransition(current.env, outcome);
    if (reportError !== undefined) throw new ReportFailed(reportError);
  }

  private async writeStatus(current: Current, status: EnvironmentStatus, now: Date): Promise<void> {
    const previous = current.env.status ?? {};
    // lastReconciled moves only with a real change, so an idle reconcile writes nothing.
    const { lastReconciled: _before, ...before } = previous;
    const { lastReconciled: _after, ...after } = status;
    if (jsonEqual(before, after)) return;
    const written = await updateStatus(this.client, current.env, { ...after, lastReconciled: formatTime(now) } as Record<string, unknown>);
    current.env = written.object;
    this.written.set(current.env.metadata.name!, current.env);
  }

  private recordTransition(env: EnvironmentObject, outcome: Outcome): void {
    const message = outcome.ready?.message ?? outcome.phase;
    const type = outcome.phase === 'Failed' ? 'Warning' : 'Normal';
    void this.events.record(env, type, outcome.phase, message);
  }

  private async recordRetry(current: Current, ctx: ReconcileContext, err: unknown): Promise<void> {
    if (err instanceof ReportFailed) return; // already recorded with the partial ids
    await current.pendingStatus?.catch(() => {});
    const env = current.env;
    const now = new Date(this.clock.now());
    const message = err instanceof Error ? err.message : String(err);
    const status: EnvironmentStatus = {
      ...(env.status ?? {}),
      retryCount: ctx.retries + 1,
      conditions: setCondition(env.status?.conditions, {
        type: conditionTypes.reconciled, status: 'False', reason: 'TransientError', message, observedGeneration: env.metadata.generation,
      }, now),
    };
    try {
      await this.writeStatus(current, status, now);
    } catch (writeErr) {
      this.logger.warn({ environment: env.metadata.name, err: toKubeError(writeErr).message }, 'could not record the retry in status');
    }
  }

  // ---- facts -----------------------------------------------------------------------------

  private siblings(env: EnvironmentObject): EnvironmentObject[] {
    return this.informers.environments.byIndex(repositoryIndex, repositoryKey(env.spec.repository));
  }

  /** expiresAt: the last deployment (or creation) plus the TTL; from status when the config's TTL is not known yet. */
  private expiry(env: EnvironmentObject, configTtl: string | undefined, policy: EffectivePolicy, configKnown: boolean): Date | undefined {
    const since = env.status?.lastDeployedAt ?? env.metadata.creationTimestamp;
    if (!since) return undefined;
    if (!env.spec.ttl && !configKnown && env.status?.expiresAt) return new Date(env.status.expiresAt);
    return expiryAfter(since, env.spec.ttl ?? configTtl ?? policy.budgets.ttl);
  }

  private async liveNamespace(name: string): Promise<KubeObject | undefined> {
    const cached = this.informers.namespaces.get(name);
    if (cached) return cached;
    // A namespace without our label is not in the informer; it must still be seen before we touch it.
    return this.client.get({ ...namespaceKind, name }).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
  }

  private cached(ref: ObjectRef): KubeObject | undefined {
    const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    if (ref.kind === 'Namespace' && ref.apiVersion === 'v1') return this.informers.namespaces.get(key);
    if (ref.kind === 'Algorithm' && ref.apiVersion === algorithmKind.apiVersion) return this.informers.algorithms.get(key);
    if (ref.kind === 'Database' && ref.apiVersion === databaseKind.apiVersion) return this.informers.databases.get(key);
    if (ref.kind === 'Ingress' && ref.apiVersion === ingressKind.apiVersion) return this.informers.ingresses.get(key);
    return this.informers.guards.find((i) => i.kind.kind === ref.kind && i.kind.apiVersion === ref.apiVersion)?.get(key);
  }

  /** The kinds prune looks at: every allowed kind and the guards, those the cluster serves. */
  private async pruneKinds(): Promise<KindRef[]> {
    const kinds = await Promise.all([...this.allowedKinds.kinds, ...guardKinds].map(async (gk) => {
      const apiVersion = await this.preferredVersion(gk.group);
      if (!apiVersion) return undefined;
      const kind = { apiVersion, kind: gk.kind };
      return (await this.client.discovery.has(kind)) ? kind : undefined;
    }));
    return kinds.filter((k): k is KindRef => k !== undefined);
  }

  private async preferredVersion(group: string): Promise<string | undefined> {
    const known = knownVersions[group] ?? this.preferredVersions.get(group);
    if (known) return known;
    try {
      const doc = await this.client.request<{ preferredVersion?: { groupVersion?: string } }>({ path: `/apis/${group}` });
      const version = doc?.preferredVersion?.groupVersion;
      if (version) this.preferredVersions.set(group, version);
      return version;
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  private forget(name: string): void {
    this.renders.delete(name);
    this.pruned.delete(name);
    this.applied.delete(name);
    this.refusals.delete(name);
    this.slots.release(name);
    this.written.delete(name);
  }
}

interface Outcome {
  phase: Phase;
  /** What the report says when it is not the phase's state (waiting for checks). */
  state?: EnvironmentState;
  /** undefined leaves the Ready condition as it is. */
  ready?: Omit<ConditionInput, 'type' | 'observedGeneration'>;
  /** The ChecksPassed condition (wait for CI). */
  checks?: Omit<ConditionInput, 'type' | 'observedGeneration'>;
  configValid?: Omit<ConditionInput, 'type' | 'observedGeneration'>;
  policyCompliant?: Omit<ConditionInput, 'type' | 'observedGeneration'>;
  /** null removes the condition (nothing to certify). */
  certificate?: Omit<ConditionInput, 'type' | 'observedGeneration'> | null;
  fields?: Partial<EnvironmentStatus>;
  /** Lines for the PR comment. */
  reasons: string[];
  /** false: status only (an intermediate step of the same reconcile). */
  report?: boolean;
}

/** A failed report, after its partial progress was persisted. */
class ReportFailed extends Error {
  constructor(readonly original: unknown) {
    super(original instanceof Error ? original.message : String(original), { cause: original });
    this.name = 'ReportFailed';
  }
}

/**
 * The fresher of our last write and the informer's copy. resourceVersions are opaque in
 * general, but etcd's are increasing integers; when they are not, the informer's copy wins.
 */
function newer(written: EnvironmentObject | undefined, cached: EnvironmentObject): EnvironmentObject {
  if (!written || written.metadata.uid !== cached.metadata.uid) return cached;
  const a = Number(written.metadata.resourceVersion);
  const b = Number(cached.metadata.resourceVersion);
  return Number.isSafeInteger(a) && Number.isSafeInteger(b) && a > b ? written : cached;
}

function slotFacts(env: EnvironmentObject): SlotEnvironment {
  return { name: env.metadata.name!, pullRequest: env.spec.pullRequest.number, phase: env.status?.phase, deleting: Boolean(env.metadata.deletionTimestamp) };
}

function holdsPhase(phase: string | undefined): boolean {
  return phase !== undefined && phase !== 'Queued';
}

function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === owner.metadata.uid);
}

function findReadyMessage(env: EnvironmentObject): string {
  return env.status?.conditions?.find((c) => c.type === conditionTypes.ready)?.message ?? 'the environment expired';
}

/** Rejections by the API server that the rendering caused (a user can fix them), or undefined. */
function describeRejection(err: unknown): Failure | undefined {
  if (err instanceof InvalidError) {
    // The comment's lines name the object: the causes alone say only which field.
    const details = err.status?.details;
    const object = details?.kind && details.name ? `${details.kind} ${details.name}: ` : '';
    const causes = err.causes.map((c) => `${object}${c.field ? `${c.field}: ` : ''}${c.message ?? c.reason ?? ''}`);
    return { kind: 'ApplyRejected', message: `the API server rejected an object: ${err.message}`, details: causes.length > 0 ? causes : [err.message] };
  }
  if (err instanceof ForbiddenError) return { kind: 'ApplyRejected', message: `the API server refused an object: ${err.message}`, details: [err.message] };
  if (err instanceof NoKindMatchError) return { kind: 'ApplyRejected', message: err.message, details: [err.message] };
  return undefined;
}

function clampRequeue(ms: number): number {
  return Math.min(Math.max(ms, 1000), maxRequeueMs);
}

function definedOnly(ids: ReportedGitHubIds): ReportedGitHubIds {
  return Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) as ReportedGitHubIds;
}
