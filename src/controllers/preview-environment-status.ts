// What a PreviewEnvironment says about itself, and to the pull request: each step of a reconcile
// ends in an Outcome (a phase, conditions, status fields and lines for the PR comment), built
// here by pure functions; `StatusWriter.settle` turns it into the status, reports it to GitHub and
// records an Event when the phase changes to one a user acts on (Queued, Failed, Expired) — one
// place, so that status, Events and the comment always tell the same story.
//
// An unchanged environment writes nothing: the status is written only when it differs, and
// status.lastReconciled moves only with another change (else every resync would write). The
// reporter is asked every time; its hashes make an unchanged report a no-op on GitHub.
import type { PreviewEnvironmentSpec, PreviewEnvironmentStatus, ResourceReadiness } from '../../constructs/index.js';
import {
  ReportError,
  type EnvironmentReport,
  type EnvironmentState,
  type ReportedGitHubIds,
  type Reporter,
} from '../github/reporting/reporter.js';
import type { ChecksVerdict } from '../github/checks-gate.js';
import {
  formatTime,
  jsonEqual,
  removeCondition,
  setCondition,
  setKstatusConditions,
  toKubeError,
  updateStatus,
  type Clock,
  type Condition,
  type ConditionInput,
  type EventRecorder,
  type KstatusSituation,
  type KubeObject,
  type Logger,
  type ObjectClient,
  type ReconcileContext,
} from '../kube/index.js';
import type { EnvironmentMemory } from './preview-environment-memory.js';
import type { RenderedEnvironment, RenderFailureKind } from './preview-environment-rendering.js';

/** The status as this controller writes it (conditions typed as src/kube's, with their helpers). */
export interface EnvironmentStatus extends Omit<PreviewEnvironmentStatus, 'conditions'> {
  conditions?: Condition[];
}

export interface EnvironmentObject extends KubeObject {
  spec: PreviewEnvironmentSpec;
  status?: EnvironmentStatus;
}

/** The freshest copy of the object this reconcile has seen (after its own writes). */
export interface Current {
  env: EnvironmentObject;
}

export type Phase = NonNullable<PreviewEnvironmentStatus['phase']>;

const phaseState: Record<Phase, EnvironmentState> = {
  Pending: 'deploying',
  Queued: 'queued',
  Deploying: 'deploying',
  Ready: 'ready',
  Failed: 'failed',
  Expired: 'expired',
  Terminating: 'destroyed',
};

/** Condition types this controller owns. */
export const conditionTypes = {
  ready: 'Ready',
  configValid: 'ConfigValid',
  policyCompliant: 'PolicyCompliant',
  certificateReady: 'CertificateReady',
  checksPassed: 'ChecksPassed',
  reconciled: 'Reconciled',
} as const;

type ConditionFields = Omit<ConditionInput, 'type' | 'observedGeneration'>;

/** How a reconcile ended, for status, Events and the PR comment. */
export interface Outcome {
  phase: Phase;
  /** What the report says when it is not the phase's state (waiting for checks). */
  state?: EnvironmentState;
  /** undefined leaves the Ready condition as it is. */
  ready?: ConditionFields;
  /** The ChecksPassed condition (wait for CI). */
  checks?: ConditionFields;
  configValid?: ConditionFields;
  policyCompliant?: ConditionFields;
  /** null removes the condition (nothing to certify). */
  certificate?: ConditionFields | null;
  fields?: Partial<EnvironmentStatus>;
  /** Lines for the PR comment. */
  reasons: string[];
}

/** Something a user can fix — in the configuration, or a refusal by the cluster — with its lines for the PR comment. */
export interface Failure {
  kind: RenderFailureKind | 'NamespaceConflict' | 'ApplyRejected';
  /** One paragraph for a condition or Event. */
  message: string;
  details: string[];
}

/** A failed report, after its partial progress was persisted. */
export class ReportFailed extends Error {
  constructor(readonly original: unknown) {
    super(original instanceof Error ? original.message : String(original), { cause: original });
    this.name = 'ReportFailed';
  }
}

// ---- outcomes --------------------------------------------------------------------------------

const configFailureKinds = new Set<Failure['kind']>([
  'ConfigMissing',
  'ConfigInvalid',
  'SandboxFailed',
  'RenderFailed',
  'SourceUnavailable',
]);

/** Failed: the configuration's fault (ConfigValid) or the rendering's (PolicyCompliant); the TTL still runs. */
export function failedOutcome(failure: Failure, expiry: Date | undefined): Outcome {
  const isConfig = configFailureKinds.has(failure.kind);
  const condition = { status: 'False', reason: failure.kind, message: failure.message } as const;
  return {
    phase: 'Failed',
    ready: condition,
    configValid: isConfig ? condition : undefined,
    policyCompliant: isConfig ? undefined : condition,
    fields: expiry ? { expiresAt: formatTime(expiry) } : {},
    reasons: failure.details,
  };
}

/** Queued behind the repository's other environments. */
export function queuedOutcome(repository: string, cap: number, position: number): Outcome {
  const message =
    `waiting for a free slot: ${repository} may run ${cap} environment${cap === 1 ? '' : 's'} at once; ` +
    `position ${position} in the queue`;
  return { phase: 'Queued', ready: { status: 'False', reason: 'Queued', message }, reasons: [message] };
}

/** The namespace is still being deleted (by hand, or by a previous life of this environment). */
export function namespaceTerminatingOutcome(name: string): Outcome {
  const message = `namespace ${name} is being deleted; it is recreated once it is gone`;
  return { phase: 'Pending', ready: { status: 'False', reason: 'NamespaceTerminating', message }, reasons: [message] };
}

/** Expired (or still so); `expiredSha` given when it expires now, which clears what served. */
export function expiredOutcome(message: string, expiredSha?: string): Outcome {
  const outcome: Outcome = { phase: 'Expired', ready: { status: 'False', reason: 'Expired', message }, reasons: [message] };
  if (expiredSha === undefined) return outcome;
  return { ...outcome, certificate: null, fields: { expiredSha, url: undefined, resources: undefined } };
}

/** Being deleted: GitHub is told it is destroyed (or, once expired, expired again: a no-op). */
export function teardownOutcome(env: EnvironmentObject): Outcome {
  if (env.status?.phase !== 'Expired') {
    const reason = 'the preview environment was deleted';
    return {
      phase: 'Terminating',
      ready: { status: 'False', reason: 'Terminating', message: `deleting namespace ${env.metadata.name}` },
      reasons: [reason],
    };
  }
  const reason = readyMessage(env);
  return { phase: 'Expired', ready: { status: 'False', reason: 'Expired', message: reason }, reasons: [reason] };
}

/** The head SHA's checks have not passed: what is deployed keeps serving, and the Ready condition keeps describing it. */
export function checksOutcome(env: EnvironmentObject, verdict: ChecksVerdict): Outcome {
  const sha = env.spec.pullRequest.headSha.slice(0, 12);
  const previous = env.status ?? {};
  const serving = previous.deployedSha !== undefined && (previous.phase === 'Ready' || previous.phase === 'Deploying');
  const failed = verdict.state === 'failed';
  const reason = failed ? 'ChecksFailed' : 'WaitingForChecks';
  const keepsServing = previous.deployedSha ? `; ${previous.deployedSha.slice(0, 12)} keeps serving` : '';
  const message = failed ? `${sha} is not deployed: ${verdict.message}` : `${sha} waits for its checks (${verdict.message})${keepsServing}`;
  return {
    phase: failed ? 'Failed' : serving ? previous.phase! : 'Pending',
    state: failed ? 'failed' : 'waiting-for-checks',
    ready: failed || !serving ? { status: 'False', reason, message } : undefined,
    checks: { status: 'False', reason, message },
    reasons: [message],
  };
}

/** What a deploy of `rendered` has come to: Ready once every resource is, else Deploying with what each waits for. */
export interface Deployed {
  rendered: RenderedEnvironment;
  readiness: { resources: ResourceReadiness[]; ready: boolean };
  /** The CertificateReady condition; undefined removes it. */
  certificate: ConditionFields | undefined;
  /** Whether a checks gate let this SHA through. */
  gated: boolean;
  lastDeployedAt: string;
  expiresAt: Date;
}

export function deployedOutcome(name: string, deployed: Deployed): Outcome {
  const { rendered, readiness } = deployed;
  const sha = rendered.sha.slice(0, 12);
  const notReady = readiness.resources.filter((r) => !r.ready).map((r) => `${r.kind} ${r.name}: ${r.message ?? 'not ready'}`);
  const config =
    rendered.configSource.from === 'head'
      ? 'configuration of the head commit'
      : `configuration of the base branch ${rendered.configSource.branch} (untrusted pull request)`;
  const renderer = rendered.renderer === 'sandbox' ? '.preview/main.ts in the sandbox' : 'the construct library';
  return {
    phase: readiness.ready ? 'Ready' : 'Deploying',
    ready: readiness.ready
      ? { status: 'True', reason: 'Ready', message: `${sha} serves at ${rendered.url ?? 'no URL (nothing is routed)'}` }
      : { status: 'False', reason: 'WaitingForResources', message: notReady.join('; ') },
    configValid: { status: 'True', reason: 'Valid', message: `${config}, rendered by ${renderer}` },
    policyCompliant: {
      status: 'True',
      reason: 'Compliant',
      message: `${rendered.objects.length} objects passed the policy and were applied`,
    },
    certificate: deployed.certificate ?? null,
    checks: deployed.gated ? { status: 'True', reason: 'ChecksPassed', message: `the checks of ${sha} passed` } : undefined,
    fields: {
      namespace: name,
      url: rendered.url,
      deployedSha: rendered.sha,
      lastDeployedAt: deployed.lastDeployedAt,
      expiresAt: formatTime(deployed.expiresAt),
      resources: readiness.resources,
    },
    reasons: rendered.notes,
  };
}

/** The Ready condition's message (what an expired environment last said). */
export function readyMessage(env: EnvironmentObject): string {
  return env.status?.conditions?.find((c) => c.type === conditionTypes.ready)?.message ?? 'the environment expired';
}

// ---- status and report -------------------------------------------------------------------------

/** The status an outcome leads to; retries and the report's ids are added by `settle`. */
export function nextStatus(previous: EnvironmentStatus, outcome: Outcome, generation: number | undefined, now: Date): EnvironmentStatus {
  let conditions = previous.conditions ?? [];
  const set = (type: string, input: ConditionFields | undefined) => {
    if (input) conditions = setCondition(conditions, { type, ...input, observedGeneration: generation }, now);
  };
  set(conditionTypes.ready, outcome.ready);
  set(conditionTypes.configValid, outcome.configValid);
  set(conditionTypes.policyCompliant, outcome.policyCompliant);
  set(conditionTypes.checksPassed, outcome.checks);
  if (outcome.certificate === null) conditions = removeCondition(conditions, conditionTypes.certificateReady);
  else set(conditionTypes.certificateReady, outcome.certificate);
  set(conditionTypes.reconciled, { status: 'True', reason: 'Reconciled', message: 'the last reconcile succeeded' });
  conditions = setKstatusConditions(conditions, kstatusSituation(outcome), generation, now);
  return { ...previous, ...outcome.fields, phase: outcome.phase, observedGeneration: generation, retryCount: 0, conditions };
}

/**
 * Where the environment stands for kstatus (Reconciling / Stalled beside Ready): converging while
 * it is pending, queued, deploying, waiting for checks or being deleted; stalled when it failed
 * or expired (only a new commit, a fix or more room moves it on).
 */
export function kstatusSituation(outcome: Outcome): KstatusSituation {
  const reason = outcome.ready?.reason ?? outcome.phase;
  const message = outcome.ready?.message ?? outcome.reasons[0] ?? outcome.phase;
  if (outcome.phase === 'Failed' || outcome.phase === 'Expired') return { state: 'stalled', reason, message };
  // A new head commit waits for its checks while the last one keeps serving: not done yet.
  if (outcome.checks?.status === 'False') return { state: 'progressing', reason: outcome.checks.reason, message: outcome.checks.message };
  return outcome.phase === 'Ready' ? { state: 'current' } : { state: 'progressing', reason, message };
}

/** What GitHub is told: the outcome, and the URL once Ready. */
export function reportOf(env: EnvironmentObject, outcome: Outcome, status: EnvironmentStatus, known: ReportedGitHubIds): EnvironmentReport {
  const resources = (status.resources ?? []).map((r: ResourceReadiness) => ({
    kind: r.kind,
    name: r.name,
    ready: r.ready,
    ...(r.message ? { message: r.message } : {}),
  }));
  return {
    repository: { owner: env.spec.repository.owner, name: env.spec.repository.name },
    pullRequest: env.spec.pullRequest.number,
    headSha: env.spec.pullRequest.headSha,
    state: outcome.state ?? phaseState[outcome.phase],
    ...(outcome.phase === 'Ready' && status.url ? { url: status.url } : {}),
    ...(status.deployedSha ? { deployedSha: status.deployedSha } : {}),
    resources,
    reasons: outcome.reasons,
    known,
  };
}

export interface StatusWriterDependencies {
  client: ObjectClient;
  reporter: Reporter;
  events: EventRecorder;
  memory: EnvironmentMemory;
  clock: Clock;
  logger: Logger;
}

/**
 * Phases announced by an Event: those a user acts on (free a slot, fix the configuration, push to
 * bring an expired preview back). Deploying, Ready and Terminating are in the status and the PR
 * comment; an Event each would be two more writes per preview for nobody to act on.
 */
const announcedPhases = new Set<Phase>(['Queued', 'Failed', 'Expired']);

/** Writes outcomes: status (when it differs), the report to GitHub, an Event per change to an announced phase. */
export class StatusWriter {
  constructor(private readonly deps: StatusWriterDependencies) {}

  /** Settles the reconcile on `outcome`; throws ReportFailed (after writing the status) when GitHub could not be told. */
  async settle(current: Current, ctx: ReconcileContext, outcome: Outcome): Promise<void> {
    const env = current.env;
    const previous = env.status ?? {};
    const now = new Date(this.deps.clock.now());
    const status = nextStatus(previous, outcome, env.metadata.generation, now);
    const reportError = await this.report(current, ctx, outcome, status, now);
    await this.write(current, status, now);
    if (previous.phase !== outcome.phase && announcedPhases.has(outcome.phase)) this.recordTransition(current.env, outcome);
    if (reportError !== undefined) throw new ReportFailed(reportError);
  }

  /** A transient error: the retry count and the Reconciled=False condition (best effort; the error is thrown anyway). */
  async recordRetry(current: Current, ctx: ReconcileContext, err: unknown): Promise<void> {
    if (err instanceof ReportFailed) return; // already recorded with the partial ids
    const env = current.env;
    const now = new Date(this.deps.clock.now());
    const message = err instanceof Error ? err.message : String(err);
    const reconciled = { type: conditionTypes.reconciled, status: 'False', reason: 'TransientError', message } as const;
    const status: EnvironmentStatus = {
      ...(env.status ?? {}),
      retryCount: ctx.retries + 1,
      conditions: setCondition(env.status?.conditions, { ...reconciled, observedGeneration: env.metadata.generation }, now),
    };
    try {
      await this.write(current, status, now);
    } catch (writeErr) {
      this.deps.logger.warn({ environment: env.metadata.name, err: toKubeError(writeErr).message }, 'could not record the retry in status');
    }
  }

  /** Tells GitHub, keeping the ids it returns in `status`; a failure is kept there too (partial ids, retry count) and returned. */
  private async report(current: Current, ctx: ReconcileContext, outcome: Outcome, status: EnvironmentStatus, now: Date): Promise<unknown> {
    const env = current.env;
    try {
      status.github = definedOnly(await this.deps.reporter.report(reportOf(env, outcome, status, env.status?.github ?? {})));
      return undefined;
    } catch (err) {
      if (err instanceof ReportError) status.github = definedOnly(err.partial);
      status.retryCount = ctx.retries + 1;
      const message = `reporting to GitHub failed: ${(err as Error).message}`;
      const failed = { type: conditionTypes.reconciled, status: 'False', reason: 'ReportFailed', message } as const;
      status.conditions = setCondition(status.conditions, { ...failed, observedGeneration: env.metadata.generation }, now);
      return err;
    }
  }

  private async write(current: Current, status: EnvironmentStatus, now: Date): Promise<void> {
    const previous = current.env.status ?? {};
    // lastReconciled moves only with a real change, so an idle reconcile writes nothing.
    const { lastReconciled: _before, ...before } = previous;
    const { lastReconciled: _after, ...after } = status;
    if (jsonEqual(before, after)) return;
    const written = await updateStatus(this.deps.client, current.env, { ...after, lastReconciled: formatTime(now) });
    current.env = written.object;
    this.deps.memory.of(current.env.metadata.name).written = current.env;
  }

  private recordTransition(env: EnvironmentObject, outcome: Outcome): void {
    const message = outcome.ready?.message ?? outcome.phase;
    const type = outcome.phase === 'Failed' ? 'Warning' : 'Normal';
    void this.deps.events.record(env, type, outcome.phase, message);
  }
}

function definedOnly(ids: ReportedGitHubIds): ReportedGitHubIds {
  return Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) as ReportedGitHubIds;
}
