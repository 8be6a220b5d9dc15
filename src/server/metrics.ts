// The operator's Prometheus metrics, on a registry of its own (never prom-client's global
// one: two operators in one process — tests — must not share counters). Controllers report
// through the runtime's ControllerMetrics interface; the webhook receiver and its
// EnvironmentWriter through their `observe` callbacks; GitHub through the rate-limit observer;
// gauges that describe the cluster or a queue are computed at scrape time from their source,
// so they are never stale.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ControllerMetrics, ReconcileOutcome } from '../kube/controller.js';
import type { KubeObject } from '../kube/kube-object.js';
import type { RateLimitObserver } from '../github/octokit-rate-limit.js';
import type { EnvironmentWrite } from '../intake/environment-writer.js';
import type { ResyncSummary } from '../intake/resync.js';
import { webhookEventLabel, type WebhookOutcome } from '../intake/webhook-receiver.js';

const prefix = 'preview_operator_';

/** Seconds from a webhook to the environment being applied or Ready: seconds to many minutes. */
const convergenceBuckets = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200];
/** Reconciles: milliseconds (a no-op) to a minute (checkout, sandbox, apply). */
const reconcileBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const webhookBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A webhook's write after the answer: tens of ms, to minutes while the API server is down and retries back off. */
const webhookWriteBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export interface OperatorMetricsOptions {
  /** Node's process metrics (CPU, memory, event loop lag, handles); default true. */
  processMetrics?: boolean;
}

type Registers = Registry[];

/** What the controllers report through ControllerMetrics. */
function controllerSeries(registers: Registers) {
  return {
    reconciles: new Counter({
      name: `${prefix}reconciles_total`,
      help: 'Reconciles finished, by controller and outcome (success, requeue, conflict, error).',
      labelNames: ['controller', 'outcome'] as const,
      registers,
    }),
    errors: new Counter({
      name: `${prefix}reconcile_errors_total`,
      help: 'Reconciles that failed and were retried with backoff.',
      labelNames: ['controller'] as const,
      registers,
    }),
    seconds: new Histogram({
      name: `${prefix}reconcile_duration_seconds`,
      help: 'Time one reconcile took.',
      labelNames: ['controller'] as const,
      buckets: reconcileBuckets,
      registers,
    }),
    queue: new Gauge({
      name: `${prefix}queue_depth`,
      help: 'Keys waiting for a worker, by controller.',
      labelNames: ['controller'] as const,
      registers,
    }),
  };
}

/** Webhook deliveries: their answers, their writes (`pendingWrites` computed at scrape time), and how long until applied and Ready. */
function webhookSeries(registers: Registers, pendingWrites: () => number) {
  const deliveries = new Counter({
    name: `${prefix}webhook_deliveries_total`,
    help: 'GitHub webhook deliveries answered, by event (ping, pull_request, check_run, check_suite; other; unknown: none named), result and HTTP status.',
    labelNames: ['event', 'result', 'status'] as const,
    registers,
  });
  const seconds = new Histogram({
    name: `${prefix}webhook_duration_seconds`,
    help: 'Time to answer a webhook delivery.',
    labelNames: ['event'] as const,
    buckets: webhookBuckets,
    registers,
  });
  const writes = new Counter({
    name: `${prefix}webhook_writes_total`,
    help: 'PreviewEnvironment writes of accepted webhook deliveries, by op (upsert, delete) and result (upserted, deleted, absent, stale: the environment records a newer pull request update, failed: refused for good).',
    labelNames: ['op', 'result'] as const,
    registers,
  });
  const writeSeconds = new Histogram({
    name: `${prefix}webhook_write_seconds`,
    help: 'From accepting a webhook delivery to its PreviewEnvironment write being made (retries included).',
    labelNames: ['op'] as const,
    buckets: webhookWriteBuckets,
    registers,
  });
  new Gauge({
    name: `${prefix}webhook_writes_pending`,
    help: "PreviewEnvironment writes waiting, retrying or in flight: accepted webhook deliveries' and the resync's.",
    registers,
    collect() {
      this.set(pendingWrites());
    },
  });
  const toApplied = new Histogram({
    name: `${prefix}webhook_to_applied_seconds`,
    help: "From a pull_request webhook to its environment's objects being applied.",
    buckets: convergenceBuckets,
    registers,
  });
  const toReady = new Histogram({
    name: `${prefix}webhook_to_ready_seconds`,
    help: 'From a pull_request webhook to its environment being Ready.',
    buckets: convergenceBuckets,
    registers,
  });
  return { deliveries, seconds, writes, writeSeconds, toApplied, toReady };
}

function resyncSeries(registers: Registers) {
  return {
    passes: new Counter({
      name: `${prefix}resync_passes_total`,
      help: 'Resync passes, by result: clean, errors (some repository could not be read), capped (the deletion cap was reached).',
      labelNames: ['result'] as const,
      registers,
    }),
    changes: new Counter({
      name: `${prefix}resync_changes_total`,
      help: 'PreviewEnvironments the resync created, updated or deleted (webhooks it repaired).',
      labelNames: ['change'] as const,
      registers,
    }),
    seconds: new Histogram({
      name: `${prefix}resync_duration_seconds`,
      help: 'Time one resync pass took.',
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
  };
}

/** The latest rate limits of every tracked GitHub client, read from `sources` at scrape time. */
function rateLimitGauges(registers: Registers, sources: readonly RateLimitObserver[]): void {
  const snapshots = () => sources.flatMap((o) => o.snapshots());
  new Gauge({
    name: `${prefix}github_rate_limit_remaining`,
    help: 'Requests left in the current GitHub rate-limit window, by credential and resource.',
    labelNames: ['client', 'resource'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of snapshots()) this.set({ client: s.client, resource: s.resource }, s.remaining);
    },
  });
  new Gauge({
    name: `${prefix}github_rate_limit_reset_timestamp_seconds`,
    help: 'When the current GitHub rate-limit window resets (Unix time).',
    labelNames: ['client', 'resource'] as const,
    registers,
    collect() {
      this.reset();
      for (const s of snapshots()) this.set({ client: s.client, resource: s.resource }, s.resetAt.getTime() / 1000);
    },
  });
}

const phases = ['Pending', 'Queued', 'Deploying', 'Ready', 'Failed', 'Expired', 'Terminating'];

/** PreviewEnvironments by phase and age, computed from `environments` at scrape time. */
function environmentGauges(registers: Registers, environments: () => readonly KubeObject[]): void {
  new Gauge({
    name: `${prefix}environments`,
    help: 'PreviewEnvironments by phase (an environment without status yet counts as Pending).',
    labelNames: ['phase'] as const,
    registers,
    collect() {
      this.reset();
      const counts = new Map<string, number>(phases.map((p) => [p, 0]));
      for (const env of environments()) {
        const phase = phaseOf(env);
        counts.set(phase, (counts.get(phase) ?? 0) + 1);
      }
      for (const [phase, count] of counts) this.set({ phase }, count);
    },
  });
  new Gauge({
    name: `${prefix}environment_age_seconds`,
    help: 'Age of each PreviewEnvironment (since it was created), by environment and phase.',
    labelNames: ['environment', 'phase'] as const,
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const env of environments()) {
        const created = Date.parse(env.metadata.creationTimestamp ?? '');
        if (!Number.isFinite(created)) continue;
        this.set({ environment: env.metadata.name ?? '', phase: phaseOf(env) }, Math.max(0, (now - created) / 1000));
      }
    },
  });
}

export class OperatorMetrics implements ControllerMetrics {
  readonly registry = new Registry();
  private readonly controller: ReturnType<typeof controllerSeries>;
  private readonly webhook: ReturnType<typeof webhookSeries>;
  private readonly githubRequests: Counter<'client' | 'resource'>;
  private readonly resync: ReturnType<typeof resyncSeries>;
  private readonly leader: Gauge<string>;
  private pendingWritesSource: (() => number) | undefined;
  private readonly rateLimitSources: RateLimitObserver[] = [];
  private environmentSource: (() => readonly KubeObject[]) | undefined;

  constructor(options: OperatorMetricsOptions = {}) {
    // Registered in this order, which is the order of the exposition.
    const registers = [this.registry];
    this.controller = controllerSeries(registers);
    this.webhook = webhookSeries(registers, () => this.pendingWritesSource?.() ?? 0);
    this.githubRequests = new Counter({
      name: `${prefix}github_requests_total`,
      help: 'GitHub API responses received (each carries rate-limit headers), by credential and rate-limit resource.',
      labelNames: ['client', 'resource'],
      registers,
    });
    this.resync = resyncSeries(registers);
    this.leader = new Gauge({ name: `${prefix}leader`, help: '1 while this replica holds the leader lease.', registers });
    rateLimitGauges(registers, this.rateLimitSources);
    environmentGauges(registers, () => this.environmentSource?.() ?? []);
    // The event loop's delay sampled every 100 ms, not prom-client's default 10 ms: that timer alone
    // woke an idle operator 100 times a second, 0.55 s of CPU a minute (npm run bench, scenario 5).
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }

  // ControllerMetrics
  reconcileFinished(controller: string, outcome: ReconcileOutcome, durationMs: number): void {
    this.controller.reconciles.inc({ controller, outcome });
    this.controller.seconds.observe({ controller }, durationMs / 1000);
  }

  queueDepth(controller: string, depth: number): void {
    this.controller.queue.set({ controller }, depth);
  }

  retried(controller: string): void {
    this.controller.errors.inc({ controller });
  }

  /** The webhook receiver's `observe` option. */
  readonly webhookDelivery = (outcome: WebhookOutcome): void => {
    const event = webhookEventLabel(outcome.event);
    this.webhook.deliveries.inc({ event, result: outcome.result, status: String(outcome.status) });
    this.webhook.seconds.observe({ event }, outcome.durationMs / 1000);
  };

  /** The EnvironmentWriter's `observe` option. */
  readonly webhookWrite = (write: EnvironmentWrite): void => {
    if (write.source !== 'webhook') return; // the resync's writes share the writer, not these series
    this.webhook.writes.inc({ op: write.op, result: write.result });
    if (write.result !== 'failed') this.webhook.writeSeconds.observe({ op: write.op }, write.durationMs / 1000);
  };

  /** Computes the pending-writes gauge from `pending` (e.g. the EnvironmentWriter's) at each scrape. */
  trackWebhookWrites(pending: () => number): void {
    this.pendingWritesSource = pending;
  }

  /** The environment's objects were applied, `seconds` after the webhook that asked for them. */
  observeWebhookToApplied(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.webhook.toApplied.observe(seconds);
  }

  /** The environment became Ready, `seconds` after the webhook that asked for it. */
  observeWebhookToReady(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.webhook.toReady.observe(seconds);
  }

  /** Counts GitHub responses and exposes the latest rate limits of `observer`; returns the unsubscribe function. */
  trackGitHub(observer: RateLimitObserver): () => void {
    this.rateLimitSources.push(observer);
    const unsubscribe = observer.subscribe((s) => this.githubRequests.inc({ client: s.client, resource: s.resource }));
    return () => {
      unsubscribe();
      const i = this.rateLimitSources.indexOf(observer);
      if (i >= 0) this.rateLimitSources.splice(i, 1);
    };
  }

  /** Computes the environment gauges from `list` (e.g. the PreviewEnvironment informer's `list`) at each scrape. */
  trackEnvironments(list: () => readonly KubeObject[]): void {
    this.environmentSource = list;
  }

  /** The resync runnable's `onPass`. */
  readonly resyncPass = (summary: ResyncSummary): void => {
    this.resync.passes.inc({ result: summary.deletionCapReached ? 'capped' : summary.errors.length > 0 ? 'errors' : 'clean' });
    this.resync.changes.inc({ change: 'created' }, summary.created.length);
    this.resync.changes.inc({ change: 'updated' }, summary.updated.length);
    this.resync.changes.inc({ change: 'deleted' }, summary.deleted.length);
    this.resync.seconds.observe(summary.durationMs / 1000);
  };

  /** The manager's `onLeadershipChange`. */
  readonly leadershipChanged = (leading: boolean): void => {
    this.leader.set(leading ? 1 : 0);
  };

  /** The exposition text, as GET /metrics serves it. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function phaseOf(env: KubeObject): string {
  const phase = (env as { status?: { phase?: unknown } }).status?.phase;
  return typeof phase === 'string' && phase ? phase : 'Pending';
}
