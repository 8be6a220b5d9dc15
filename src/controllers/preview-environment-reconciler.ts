// The PreviewEnvironment reconciler: makes a pull request's environment exist at the PR's head
// commit, reports it, and removes it completely. Level-triggered; `converge` is a recipe of named
// steps, each ending the reconcile with its result or letting the next one go on:
//
//   begin (finalizer) → admit (per-repository cap, else Queued) → checkExpiry (TTL, else Expired:
//   namespace deleted, object kept) → repair the guards of what serves → gate (wait for CI on a new
//   head SHA) → checkNamespace (ours, or none yet) → keepWildcardCopy (the wildcard TLS mode's
//   certificate copied into the namespace) → render (at the head SHA) → checkServed → apply (dry
//   run of a new rendering first: a refusal applies nothing) → prune → observe (readiness) →
//   settle (status, Event, report; a new SHA's Deploying held back briefly, progress paced)
//
// Deleted, or expired: preview-environment-teardown.ts. What each step writes to status and tells
// GitHub: preview-environment-status.ts. Writing the rendering: preview-environment-apply.ts.
// Wiring (informers, watches, filters): preview-environment.ts. The wildcard TLS modes:
// preview-environment-wildcard-tls.ts.
//
// An unchanged environment costs reads only: every write (finalizer, apply, prune, status, events,
// GitHub) happens only when something differs. Problems a user can fix (configuration, sandbox,
// policy, rejected objects) become status conditions, an Event and PR comment lines, never a
// crash loop; transient ones throw and back off per key, counted in status.retryCount.
//
// Decisions: the namespace is the PreviewEnvironment's name and must be controlled by it (an
// existing namespace of someone else's is never touched, nor deleted); untrusted pull requests
// (fork, or association outside policy.trust.associations — the approval label lets the GitHub
// side create the environment, it does not make the PR's code trusted) render the base branch's
// configuration with only image tags from the PR, and their main.ts is never read; with
// cert-manager installed, Ready waits for the Certificate (see preview-environment-readiness.ts), and in
// the wildcard TLS modes for a wildcard certificate that covers the host.
import { certificateKind } from '../../constructs/index.js';
import {
  ConflictError,
  EventRecorder,
  NotFoundError,
  addFinalizer,
  formatTime,
  identityOf,
  isControlledBy,
  refOf,
  toKubeError,
  type CacheReader,
  type Clock,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ObjectRef,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '../kube/index.js';
import { Semaphore } from '../kube/semaphore.js';
import { environmentAnnotationKeys } from '../intake/environment-store.js';
import { effectiveTtl, expiresAt as expiryAfter } from '../policy/budgets.js';
import { effectivePolicy, type EffectivePolicy } from '../policy/policy-config.js';
import { AllowedKinds } from '../synth/guard-allowed-kinds.js';
import { issuerProblems } from './certificate-issuers.js';
import { RenderingApplier } from './preview-environment-apply.js';
import { EnvironmentCaches, namespaceKind, type EnvironmentInformers } from './preview-environment-caches.js';
import { EnvironmentMemory } from './preview-environment-memory.js';
import {
  renderSettings,
  servesTls,
  withDefaults,
  type PreviewEnvironmentControllerOptions,
  type Settings,
} from './preview-environment-options.js';
import { certificateCondition, environmentReadiness } from './preview-environment-readiness.js';
import { renderEnvironment, type RenderedEnvironment, type RenderFailure, type RenderOutcome } from './preview-environment-rendering.js';
import type { SlotEnvironment } from './preview-environment-slots.js';
import {
  StatusWriter,
  checksOutcome,
  deployedOutcome,
  failedOutcome,
  namespaceTerminatingOutcome,
  queuedOutcome,
  type Current,
  type Deployed,
  type EnvironmentObject,
  type EnvironmentStatus,
  type Failure,
} from './preview-environment-status.js';
import {
  EnvironmentTeardown,
  isExpiredAtHead,
  maxNamespacePollMs,
  namespacePollWait,
  previewEnvironmentFinalizer,
} from './preview-environment-teardown.js';
import { WildcardTls } from './preview-environment-wildcard-tls.js';
import { progressWait } from './progress-pacer.js';

/** How soon an unreadable commit or repository is tried again. */
const sourceRetryMs = 30_000;
/** setTimeout fires at once beyond 2^31-1 ms; the periodic resync covers longer waits anyway. */
const maxRequeueMs = 6 * 3600_000;

/** One converge of one environment: the object, and what its steps found on the way. */
interface Run {
  current: Current;
  ctx: ReconcileContext;
  name: string;
  /** The object as this converge began, its finalizer added. */
  env: EnvironmentObject;
  policy: EffectivePolicy;
  now: number;
  /** The time to live of the last rendering this process made (before this converge renders). */
  configTtl?: string;
  /** When the environment expires (undefined: not known yet, or out of Expired by a new head SHA). */
  expiry?: Date;
  /** The environment's namespace as found (undefined: none yet). */
  namespace?: KubeObject;
  /** TLS is served: wanted, and (per preview) the cluster serves cert-manager's Certificate. */
  tls: boolean;
  /** The wildcard certificate's copy in the namespace, as keepWildcardCopy left it. */
  wildcardCopy?: KubeObject;
  laps: Laps;
}

/** What `observe` found: the deploy's outcome, and whether it is a new one. */
type Observed = Deployed & { redeployed: boolean };

export class PreviewEnvironmentReconciler implements Reconciler {
  private readonly settings: Settings;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly memory = new EnvironmentMemory();
  private readonly caches: EnvironmentCaches;
  private readonly applier: RenderingApplier;
  private readonly status: StatusWriter;
  private readonly teardown: EnvironmentTeardown;
  private readonly allowedKinds: AllowedKinds;
  private readonly sandboxRuns: Semaphore;
  private readonly wildcardTls: WildcardTls;

  constructor(
    private readonly client: ObjectClient,
    informers: EnvironmentInformers,
    options: PreviewEnvironmentControllerOptions,
  ) {
    const settings = withDefaults(options);
    const { logger, clock } = settings;
    const memory = this.memory;
    this.settings = settings;
    this.logger = logger;
    this.clock = clock;
    this.allowedKinds = new AllowedKinds(settings.allowedKinds);
    this.sandboxRuns = new Semaphore(settings.sandboxConcurrency);
    this.caches = new EnvironmentCaches(informers, client);
    this.applier = new RenderingApplier({ client, caches: this.caches, memory, allowedKinds: this.allowedKinds, clock, logger });
    const events = new EventRecorder(client, { component: 'preview-operator', logger });
    this.status = new StatusWriter({ client, reporter: settings.reporter, events, memory, clock, logger });
    this.teardown = new EnvironmentTeardown({ client, caches: this.caches, memory, status: this.status, settings, clock, logger });
    const { tlsMode: mode, tlsWildcardSecret: secret } = settings;
    this.wildcardTls = new WildcardTls({ client, informers: informers.wildcardTls, mode, ...(secret ? { secret } : {}), logger });
  }

  async reconcile(name: string, ctx: ReconcileContext): Promise<ReconcileResult | void> {
    const cached = this.caches.environment(name);
    if (!cached) {
      this.memory.forget(name);
      return;
    }
    // A reconcile right after our own write must not work from the copy before it (it would
    // report with stale GitHub ids and create a second comment or deployment).
    const remembered = this.memory.of(name);
    const env = newer(remembered.written, cached);
    if (env === cached) remembered.written = undefined;
    const current: Current = { env };
    try {
      if (env.metadata.deletionTimestamp) return await this.teardown.finalize(current, ctx);
      return await this.converge(current, ctx);
    } catch (err) {
      const kubeErr = toKubeError(err);
      if (!(kubeErr instanceof ConflictError) && !(kubeErr instanceof NotFoundError && current.env.metadata.deletionTimestamp)) {
        await this.status.recordRetry(current, ctx, err);
      }
      throw err;
    }
  }

  /**
   * Keys of the environments of `obj`'s repository waiting for a slot (they may start when it
   * changes): Queued, or not yet admitted — under a cap only; one admitted but not yet written
   * (its first status waits for Ready) is not woken by its siblings' writes.
   */
  queuedSiblings(obj: EnvironmentObject): string[] {
    if (!obj.spec?.repository) return [];
    if (effectivePolicy(this.settings.policy, obj.spec.repository).budgets.maxEnvironmentsPerRepository === null) return [];
    const waiting = (e: EnvironmentObject) =>
      e.status?.phase === 'Queued' || (e.status?.phase === undefined && !this.memory.slots.holds(e.metadata.name));
    return this.caches
      .siblings(obj)
      .filter((e) => e.metadata.name !== obj.metadata.name && waiting(e))
      .map((e) => e.metadata.name);
  }

  /**
   * Keys waiting for the slot of the environment whose namespace `namespace` is, when it is going
   * or its environment Expired: a namespace holds its environment's slot until it is gone, and
   * nothing else of an Expired environment changes then (its status was written when it expired).
   * Not by the namespace's deletionTimestamp alone: after a relist, its DELETED event may carry
   * an older copy without one.
   */
  queuedBehindNamespace(namespace: KubeObject): string[] {
    const env = this.caches.environment(namespace.metadata.name);
    if (!env || !isControlledBy(namespace, env)) return [];
    return namespace.metadata.deletionTimestamp || env.status?.phase === 'Expired' ? this.queuedSiblings(env) : [];
  }

  /** The environment whose guard `obj` no longer is as applied (see RenderingApplier.drifted). */
  driftedGuard(informer: CacheReader, obj: KubeObject): string[] {
    return this.applier.drifted(informer, obj);
  }

  // ---- converge: the recipe --------------------------------------------------------------------

  private async converge(current: Current, ctx: ReconcileContext): Promise<ReconcileResult> {
    if (isExpiredAtHead(current.env)) return this.teardown.stayExpired(current, ctx);
    const run = await this.begin(current, ctx);
    const waiting = (await this.admit(run)) ?? (await this.checkExpiry(run));
    if (waiting) return waiting;
    // Whatever this reconcile goes on to do (wait for checks, fail to render, be refused), the
    // guards of what serves are put back if they drifted.
    await this.applier.repairGuards(run.env);
    const held = (await this.gate(run)) ?? (await this.checkNamespace(run));
    if (held) return held;
    await this.keepWildcardCopy(run);
    const outcome = await this.render(run);
    if (!outcome.ok) {
      await this.repairServedAfterRestart(run);
      return this.renderFailed(run, outcome.failure);
    }
    const refused = (await this.checkServed(run, outcome.rendered)) ?? (await this.apply(run, outcome.rendered));
    if (refused) {
      await this.repairServedAfterRestart(run);
      return refused;
    }
    await this.prune(run, outcome.rendered);
    return this.settle(run, await this.observe(run, outcome.rendered));
  }

  /** The finalizer first: nothing is created that the teardown would not find. */
  private async begin(current: Current, ctx: ReconcileContext): Promise<Run> {
    const name = current.env.metadata.name;
    const withFinalizer = await addFinalizer(this.client, current.env, previewEnvironmentFinalizer);
    if (withFinalizer !== current.env) this.memory.of(name).written = withFinalizer;
    current.env = withFinalizer;
    const env = current.env;
    return {
      current,
      ctx,
      name,
      env,
      policy: effectivePolicy(this.settings.policy, env.spec.repository),
      now: this.clock.now(),
      tls: false,
      laps: new Laps(),
    };
  }

  /** Under the repository's cap (pull-request order), or Queued. */
  private async admit(run: Run): Promise<ReconcileResult | undefined> {
    const siblings = this.caches
      .siblings(run.env)
      .map((e) => slotFacts(e, this.caches.cached({ ...namespaceKind, name: e.metadata.name })));
    const decision = this.memory.slots.decide(run.name, siblings, run.policy.budgets.maxEnvironmentsPerRepository);
    if (decision.admitted) return undefined;
    await this.status.settle(run.current, run.ctx, queuedOutcome(run.policy.repository, decision.cap, decision.position));
    return {};
  }

  /** Within its time to live, or Expired: the namespace goes, the object stays. */
  private async checkExpiry(run: Run): Promise<ReconcileResult | undefined> {
    const env = run.env;
    const memo = this.memory.peek(run.name)?.render;
    run.configTtl = memo?.outcome.ok ? memo.outcome.rendered.config.ttl : undefined;
    // Out of Expired by a new head SHA: its TTL starts when it is deployed.
    run.expiry = env.status?.phase === 'Expired' ? undefined : this.expiry(env, run.configTtl, run.policy, memo !== undefined);
    if (run.expiry === undefined || run.now < run.expiry.getTime()) return undefined;
    return this.teardown.expire(run.current, run.ctx, run.expiry, effectiveTtl(env.spec.ttl, run.configTtl, run.policy.budgets).ttl);
  }

  /** Wait for CI: a new head SHA is deployed once its checks passed; what is deployed keeps serving meanwhile. */
  private async gate(run: Run): Promise<ReconcileResult | undefined> {
    const { env } = run;
    const gate = this.settings.checksGate;
    if (!gate || (env.status?.phase !== 'Expired' && env.spec.pullRequest.headSha === env.status?.deployedSha)) return undefined;
    // Applied already, its status still held back (deployingWait): its checks passed then.
    if (this.memory.peek(run.name)?.deploying?.sha === env.spec.pullRequest.headSha) return undefined;
    const verdict = await gate.state(env.spec.repository, env.spec.pullRequest.headSha);
    if (verdict.state === 'passed') return undefined;
    await this.status.settle(run.current, run.ctx, checksOutcome(run.current.env, verdict));
    const wait = verdict.state === 'failed' ? this.settings.checksFailedPollMs : this.settings.checksPollMs;
    return { requeueAfter: clampRequeue(run.expiry ? Math.min(wait, run.expiry.getTime() - this.clock.now()) : wait) };
  }

  /** The namespace is this environment's or none yet: someone else's is never touched, one being deleted is waited for. */
  private async checkNamespace(run: Run): Promise<ReconcileResult | undefined> {
    const namespace = (run.namespace = await this.caches.namespace(run.name));
    if (namespace && !isControlledBy(namespace, run.env)) {
      const failed = await this.fail(
        run,
        {
          kind: 'NamespaceConflict',
          message: `namespace ${run.name} exists and does not belong to this PreviewEnvironment; it is left untouched`,
          details: [`namespace ${run.name} already exists and belongs to something else`],
        },
        run.expiry,
      );
      // No event of someone else's namespace wakes this environment: it looks again, so that the
      // namespace's removal lets it deploy.
      return { requeueAfter: Math.min(failed.requeueAfter ?? maxNamespacePollMs, maxNamespacePollMs) };
    }
    if (!namespace?.metadata.deletionTimestamp) return undefined;
    // Deleted by hand: recreated once gone.
    await this.status.settle(run.current, run.ctx, namespaceTerminatingOutcome(run.name));
    return { requeueAfter: namespacePollWait(this.memory, run.name, namespace, this.clock.now(), this.settings.namespacePollMs) };
  }

  /**
   * The wildcard certificate's copy in the namespace, in step with its source whatever this
   * reconcile goes on to do (a rendering that fails leaves the last one serving, with the
   * certificate renewed); a namespace created by this reconcile gets it once the rendering is
   * applied (`created`). In the other TLS modes, a copy left from a wildcard run is deleted.
   */
  private async keepWildcardCopy(run: Run, created = false): Promise<void> {
    if (run.namespace || created) run.wildcardCopy = await this.wildcardTls.keepCopy(run.name);
  }

  /**
   * Renders the head SHA (reading .preview/, at most a checkout: nothing changes in the cluster).
   * The slot it was admitted to is this process's to remember (memory.slots) until a status
   * says so: only the leader reconciles, and after a restart the admission is decided again.
   */
  private async render(run: Run): Promise<RenderOutcome> {
    const perPreview = this.settings.tlsIssuer !== false && this.settings.tlsMode === 'per-preview';
    run.tls = servesTls(this.settings, perPreview && (await this.client.discovery.has(certificateKind)));
    run.laps = new Laps();
    return this.renderAt(run.env, run.tls, run.policy);
  }

  /**
   * The head is refused, and this process has applied nothing to the environment (it restarted
   * since): the guards of what serves are learnt once from the deployed commit's rendering and put
   * back if they drifted — and from then on whenever they drift, as after any apply.
   */
  private async repairServedAfterRestart(run: Run): Promise<void> {
    const deployed = run.env.status?.deployedSha;
    const remembered = this.memory.of(run.name);
    if (!deployed || !run.namespace || remembered.applied || remembered.servedGuardsOf === deployed) return;
    remembered.servedGuardsOf = deployed;
    const served = await this.renderCommit(run.env, deployed, run.tls, run.policy);
    if (!served.ok) return;
    this.applier.rememberServed(run.env, served.rendered);
    await this.applier.repairGuards(run.env);
  }

  /** A rendering a user can fix fails the environment; an unreadable commit is looked at again soon. */
  private async renderFailed(run: Run, failure: RenderFailure): Promise<ReconcileResult> {
    const result = await this.fail(run, failure, this.expiry(run.current.env, run.configTtl, run.policy, true));
    if (failure.kind !== 'SourceUnavailable') return result;
    return { requeueAfter: Math.min(result.requeueAfter ?? sourceRetryMs, sourceRetryMs) };
  }

  /** Every kind of the rendering is served by the cluster, or nothing is applied. */
  private async checkServed(run: Run, rendered: RenderedEnvironment): Promise<ReconcileResult | undefined> {
    const unserved: string[] = [];
    for (const obj of rendered.objects) if (!(await this.client.discovery.has(obj))) unserved.push(`${obj.kind} (${obj.apiVersion})`);
    if (unserved.length === 0) return undefined;
    const kinds = [...new Set(unserved)];
    return this.fail(
      run,
      {
        kind: 'ApplyRejected',
        message: `the cluster does not serve ${kinds.join(', ')}; nothing was applied`,
        details: kinds.map((k) => `the cluster does not serve ${k}`),
      },
      this.expiry(run.current.env, rendered.config.ttl, run.policy, true),
    );
  }

  /**
   * The namespace and the rendering (RenderingApplier.apply); a refusal by the API server fails the
   * environment. A namespace created now gets its wildcard certificate here: its creation coming
   * back by the watch wakes nothing.
   */
  private async apply(run: Run, rendered: RenderedEnvironment): Promise<ReconcileResult | undefined> {
    run.laps.lap('render');
    const refused = await this.applier.apply(run.current.env, rendered, run.namespace);
    if (refused) return this.fail(run, refused, this.expiry(run.current.env, rendered.config.ttl, run.policy, true));
    if (!run.namespace) await this.keepWildcardCopy(run, true);
    return undefined;
  }

  /** What left the rendering goes (once per rendering). */
  private async prune(run: Run, rendered: RenderedEnvironment): Promise<void> {
    run.laps.lap('apply');
    await this.applier.prune(run.name, rendered, !run.namespace);
    run.laps.lap('prune');
  }

  /** What the cluster shows of what was applied: each resource's readiness, the Certificate's issuer, the TTL from this deploy. */
  private async observe(run: Run, rendered: RenderedEnvironment): Promise<Observed> {
    const applied = rendered.objects.map(refOf);
    const certificates = await this.liveCertificates(applied.filter((r) => r.kind === 'Certificate'));
    const issuers = await issuerProblems(this.client, certificates);
    const readiness = environmentReadiness(
      applied,
      (ref) => (ref.kind === 'Certificate' ? certificates.get(identityOf(ref)) : this.applier.live(ref)),
      rendered.identity.host,
      (ref) => issuers.get(identityOf(ref)),
    );
    // The wildcard modes: the Secret the host is served from, last (once something is routed).
    const host = rendered.identity.host;
    const wildcard = rendered.url && run.tls ? await this.wildcardTls.readiness(host, new Date(run.now), run.wildcardCopy) : undefined;
    if (wildcard) readiness.resources.push(wildcard);
    readiness.ready &&= wildcard?.ready ?? true;
    const previous = run.current.env.status ?? {};
    // A new SHA, or the same one out of Expired, starts a fresh TTL.
    const redeployed = previous.phase === 'Expired' || previous.deployedSha !== rendered.sha;
    const lastDeployedAt = !redeployed && previous.lastDeployedAt ? previous.lastDeployedAt : formatTime(new Date(run.now));
    const { ttl } = effectiveTtl(run.current.env.spec.ttl, rendered.config.ttl, run.policy.budgets);
    const certified = wildcard !== undefined || applied.some((r) => r.kind === 'Certificate');
    const certificate =
      this.settings.tlsIssuer === false
        ? undefined
        : certificateCondition(run.tls, certified, wildcard ? [wildcard] : readiness.resources.filter((r) => r.kind === 'Certificate'));
    const gated = this.settings.checksGate !== undefined;
    return { rendered, readiness, certificate, gated, lastDeployedAt, expiresAt: expiryAfter(lastDeployedAt, ttl), redeployed };
  }

  /**
   * Ready, or Deploying with what each resource waits for. Not yet Ready, a deploy waits before it
   * is written and reported (deployingWait) — not while a failure is recorded (a report that
   * failed is retried with the controller's backoff, not at the pace of progress).
   */
  private async settle(run: Run, observed: Observed): Promise<ReconcileResult> {
    const { rendered, readiness, redeployed } = observed;
    const previous = run.current.env.status ?? {};
    // Held back, a new SHA stays "redeployed" in every reconcile until written: it was applied in the first.
    const firstApply = redeployed && this.memory.peek(run.name)?.deploying?.sha !== rendered.sha;
    this.timeDelivery(run.current.env, run.now, firstApply, readiness.ready && (redeployed || previous.phase !== 'Ready'));
    const wait = readiness.ready || previous.retryCount ? 0 : this.deployingWait(run.name, previous, rendered.sha);
    if (wait > 0) {
      this.logger.debug({ environment: run.name, ms: run.laps.ms, wait }, 'reconciled; progress written at the end of the wait');
      return { requeueAfter: clampRequeue(Math.min(observed.expiresAt.getTime() - this.clock.now(), wait)) };
    }
    await this.status.settle(run.current, run.ctx, deployedOutcome(run.name, observed));
    this.memory.of(run.name).deploying = undefined;
    run.laps.lap('status');
    this.logger.debug({ environment: run.name, phase: run.current.env.status?.phase, ms: run.laps.ms }, 'reconciled');
    const waits = [observed.expiresAt.getTime() - this.clock.now()];
    if (run.tls && observed.certificate?.status === 'False') waits.push(this.settings.certificatePollMs);
    return { requeueAfter: clampRequeue(Math.min(...waits)) };
  }

  // ---- helpers of the steps ----------------------------------------------------------------------

  /**
   * Milliseconds until a deploy that is not Ready yet is written: a new SHA waits
   * `deployingReportDelayMs` from its first apply, so one that becomes Ready within it is
   * written and reported once, as Ready (its readiness wakes a reconcile at once); the progress
   * of a deploy already written as Deploying goes out once per interval (progress-pacer.ts).
   * Only a new SHA over nothing or over what serves waits: the deployed SHA no longer Ready, or a
   * new one after Queued, Pending or Failed, is written at once (the status would mislead meanwhile).
   */
  private deployingWait(name: string, previous: EnvironmentStatus, sha: string): number {
    const now = this.clock.now();
    if (previous.deployedSha === sha && previous.phase !== 'Expired') {
      return progressWait(previous, sha, now, this.settings.progressIntervalMs);
    }
    if (previous.phase !== undefined && previous.phase !== 'Ready' && previous.phase !== 'Deploying') return 0;
    const memory = this.memory.of(name);
    if (memory.deploying?.sha !== sha) memory.deploying = { sha, since: now };
    return Math.max(0, memory.deploying.since + this.settings.deployingReportDelayMs - now);
  }

  private async fail(run: Run, failure: Failure, expiry: Date | undefined): Promise<ReconcileResult> {
    await this.status.settle(run.current, run.ctx, failedOutcome(failure, expiry));
    return expiry ? { requeueAfter: clampRequeue(expiry.getTime() - this.clock.now()) } : {};
  }

  /** The rendering at the head SHA, once per uid, generation, head SHA, whether TLS is served and the policy's quota ceilings. */
  private async renderAt(env: EnvironmentObject, tls: boolean, policy: EffectivePolicy): Promise<RenderOutcome> {
    const name = env.metadata.name;
    const ceilings = JSON.stringify(policy.budgets.maxResources);
    const key = `${env.metadata.uid}/${env.metadata.generation}/${env.spec.pullRequest.headSha}/${tls ? 'tls' : 'plain'}/${ceilings}`;
    const memo = this.memory.peek(name)?.render;
    if (memo?.key === key) return memo.outcome;
    const outcome = await this.renderCommit(env, env.spec.pullRequest.headSha, tls, policy);
    // A commit or repository that cannot be read may become readable (a push still propagating,
    // access granted): that failure is looked at again, everything else is a function of the key.
    if (outcome.ok || outcome.failure.kind !== 'SourceUnavailable') this.memory.of(name).render = { key, outcome };
    return outcome;
  }

  /** The environment rendered at `sha` (its head, or the deployed commit), without the memo. */
  private async renderCommit(env: EnvironmentObject, sha: string, tls: boolean, policy: EffectivePolicy): Promise<RenderOutcome> {
    const name = env.metadata.name;
    const started = performance.now();
    const token = await this.settings.gitToken?.({ owner: env.spec.repository.owner, name: env.spec.repository.name });
    const { settings } = this;
    const outcome = await renderEnvironment(
      {
        name,
        spec: { ...env.spec, pullRequest: { ...env.spec.pullRequest, headSha: sha } },
        settings: renderSettings(settings, tls),
        trust: policy.trust,
        allowedKinds: this.allowedKinds,
        renderPolicy: settings.renderPolicy,
        maxResources: policy.budgets.maxResources,
        token,
      },
      { repositories: settings.repositories, files: settings.previewFiles, sandbox: settings.sandbox, sandboxRuns: this.sandboxRuns },
    );
    this.logger.info(
      {
        environment: name,
        sha,
        ms: Math.round(performance.now() - started),
        ...(outcome.ok
          ? { renderer: outcome.rendered.renderer, objects: outcome.rendered.objects.length }
          : { failure: outcome.failure.kind }),
      },
      'rendered',
    );
    return outcome;
  }

  private async liveCertificates(refs: readonly ObjectRef[]): Promise<Map<string, KubeObject>> {
    const live = new Map<string, KubeObject>();
    for (const ref of refs) {
      const certificate = await this.client.get(ref).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
      if (certificate) live.set(identityOf(ref), certificate);
    }
    return live;
  }

  /** expiresAt: the last deployment (or creation) plus the TTL; from status when the config's TTL is not known yet. */
  private expiry(env: EnvironmentObject, configTtl: string | undefined, policy: EffectivePolicy, configKnown: boolean): Date | undefined {
    const since = env.status?.lastDeployedAt ?? env.metadata.creationTimestamp;
    if (!since) return undefined;
    if (!env.spec.ttl && !configKnown && env.status?.expiresAt) return new Date(env.status.expiresAt);
    return expiryAfter(since, effectiveTtl(env.spec.ttl, configTtl, policy.budgets).ttl);
  }

  private timeDelivery(env: EnvironmentObject, now: number, applied: boolean, ready: boolean): void {
    const timing = this.settings.deliveryTiming;
    const deliveredAt = Date.parse(env.metadata.annotations?.[environmentAnnotationKeys.deliveredAt] ?? '');
    if (!timing || Number.isNaN(deliveredAt) || deliveredAt > now) return;
    const seconds = (now - deliveredAt) / 1000;
    if (applied) timing.applied(seconds);
    if (ready) timing.ready(seconds);
  }
}

/** Milliseconds per step of a converge, for the debug log. */
class Laps {
  readonly ms: Record<string, number> = {};
  private mark = performance.now();

  lap(step: string): void {
    const t = performance.now();
    this.ms[step] = Math.round(t - this.mark);
    this.mark = t;
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

/** `namespace`: the cached namespace of the environment's name, if any (its own one holds the slot: SlotEnvironment). */
function slotFacts(env: EnvironmentObject, namespace: KubeObject | undefined): SlotEnvironment {
  const own = !!namespace && isControlledBy(namespace, env);
  return {
    name: env.metadata.name,
    pullRequest: env.spec.pullRequest.number,
    phase: env.status?.phase,
    deleting: Boolean(env.metadata.deletionTimestamp),
    namespace: own ? (namespace.metadata.deletionTimestamp ? 'going' : 'standing') : undefined,
  };
}

function clampRequeue(ms: number): number {
  return Math.min(Math.max(ms, 1000), maxRequeueMs);
}
