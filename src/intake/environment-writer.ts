// The write-behind queue of desired PreviewEnvironment state. The webhook answers as soon as
// a delivery's intent is queued here; the one cluster write (server-side apply of the spec, or
// delete) happens after. No synchronous design could answer within GitHub's patience under
// load (the API server's write rate bounds it), and GitHub never redelivers a failed delivery
// by itself, so retrying here is also more robust than answering 503.
//
// - Per environment, writes are strictly ordered and never concurrent. An intent submitted
//   while an older one for the same name is still waiting replaces it (only the newest desired
//   state matters); one submitted while a write for that name is in flight runs after it.
// - Across environments, at most `concurrency` writes are in flight, oldest-waiting first.
// - Transient failures (`isTransient`: 429, 5xx, network errors, the client's request timeout)
//   are retried with jittered exponential backoff, for as long as the API server is away (an
//   outage, a restart, a lost lease: none of these stop the writer), until they succeed or a
//   newer intent replaces them. Memory is bounded: at most `maxWaiting` environments wait (one
//   intent each, the newest); beyond that `submit` throws `WriterFullError` and the delivery is
//   answered 503, to be redelivered or repaired by the resync. `pending` is exported as a metric.
//   Permanent failures (Invalid, Forbidden, a CRD not installed, …) are logged at error and
//   counted, not retried: the same write would be refused again. The resync, which compares
//   every open pull request with its PreviewEnvironment, is the backstop for those and for
//   intents lost with the process (this queue lives in memory).
// - A slow write is never abandoned for the next one, which would make two writes for one name
//   concurrent: the store's own request timeout (KubeClient: 30 s) turns a hang into a
//   transient error.
// - The resync writes through here too (`write`), with the time its listing was read: an intent
//   submitted after that (a delivery that arrived during the pass) is newer than what the
//   listing says, so the resync's is dropped; the resync's replaces an older intent still
//   waiting (say, a delivery's write backing off). Either order leaves the newest state written.
// - Whatever the order here, the store never moves an environment back in time: a write whose
//   pull request update is older than the one the object records ends `stale`, nothing written
//   (see environment-recency.ts). Stale is an outcome, not a failure: nothing is retried.
// Every outcome is logged; `observe` sees every finished write.
import type { PreviewEnvironmentSpec } from '../../constructs/api-types.js';
import { systemClock, type Clock, type TimerHandle } from '../kube/clock.js';
import { isTransient, toKubeError, TransientError } from '../kube/errors.js';
import { silentLogger, type Logger } from '../kube/logger.js';
import type { EnvironmentStore } from './environment-store.js';

/** Too many environments wait for their write already (`maxWaiting`): this one is refused, not queued. */
export class WriterFullError extends Error {
  constructor(readonly maxWaiting: number) {
    super(`${maxWaiting} PreviewEnvironment writes are already waiting for the cluster`);
    this.name = 'WriterFullError';
  }
}

/** The desired state of one PreviewEnvironment. */
export type EnvironmentIntent =
  | {
      op: 'upsert';
      spec: PreviewEnvironmentSpec;
      /** When the delivery that asked for it arrived (stamped on the object for webhook → applied timing); none for the resync's. */
      deliveredAt?: Date;
    }
  | {
      op: 'delete';
      /** The pull request update that asked for it: not made when the environment records a newer one. */
      updatedAt?: string;
      /** The repository whose pull request asked for it: another repository's environment of the same name stays. */
      repository?: { owner: string; name: string };
    };

/** `stale`: refused by the store, the environment records a newer pull request update (nothing written). */
export type EnvironmentWriteResult = 'upserted' | 'deleted' | 'absent' | 'stale' | 'failed';

/** How a `write` ended for its caller: made, or dropped for a newer intent (`superseded`). */
export type EnvironmentWriteOutcome = Exclude<EnvironmentWriteResult, 'failed'> | 'superseded';

/** One finished write: written, or refused for good. */
export interface EnvironmentWrite {
  environment: string;
  /** `webhook`: submitted by a delivery (`submit`); `resync`: by the resync (`write`). */
  source: 'webhook' | 'resync';
  op: EnvironmentIntent['op'];
  result: EnvironmentWriteResult;
  /** Attempts made, retries included. */
  attempts: number;
  /** From `submit` to the write's end. */
  durationMs: number;
}

export interface EnvironmentWriterOptions {
  store: EnvironmentStore;
  /** Writes in flight at once, across environments (default 8). */
  concurrency?: number;
  /** First retry delay after a transient failure; doubles per attempt (default 200 ms). */
  initialDelayMs?: number;
  /** Cap of the retry delay (default 30 s). */
  maxDelayMs?: number;
  /** Called once per finished write. */
  observe?: (write: EnvironmentWrite) => void;
  logger?: Logger;
  clock?: Clock;
  /** The jitter's source, in [0, 1) (default Math.random). */
  random?: () => number;
  /** How long the newest observation per environment is remembered, against older `write`s (default 1 h: longer than any resync pass). */
  observationMemoryMs?: number;
  /** Environments whose write may wait at once (default 10 000, about 10 MB of specs); more are refused with `WriterFullError`. */
  maxWaiting?: number;
}

interface Queued {
  intent: EnvironmentIntent;
  submittedAt: number;
  attempts: number;
  /** When the state this intent describes was seen: a delivery's arrival, a listing's read. */
  observedAt: number;
  source: EnvironmentWrite['source'];
  /** For `write`: told once how the intent ended (written, refused, replaced, or its first transient failure). */
  settle?: (outcome: EnvironmentWriteOutcome | Error) => void;
}

export class EnvironmentWriter {
  readonly concurrency: number;
  private readonly store: EnvironmentStore;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly observe: (write: EnvironmentWrite) => void;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly random: () => number;
  /** name → the newest intent not started yet (including one waiting to be retried). */
  private readonly waiting = new Map<string, Queued>();
  /** Names whose waiting intent may start now; a Set iterates in insertion order, so oldest first. */
  private readonly ready = new Set<string>();
  /** name → the retry timer of its waiting intent. */
  private readonly backingOff = new Map<string, TimerHandle>();
  private readonly inFlight = new Map<string, Queued>();
  /** name → the newest `observedAt` submitted, oldest first (re-inserted on every update), kept `observationMemoryMs`. */
  private readonly observed = new Map<string, number>();
  private readonly observationMemoryMs: number;
  private readonly maxWaiting: number;
  private idleWaiters: (() => void)[] = [];
  /** Writes refused for good (for alerts; the metrics count them through `observe`). */
  failures = 0;

  constructor(options: EnvironmentWriterOptions) {
    this.store = options.store;
    this.concurrency = options.concurrency ?? 8;
    this.initialDelayMs = options.initialDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.observe = options.observe ?? (() => {});
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.observationMemoryMs = options.observationMemoryMs ?? 3_600_000;
    this.maxWaiting = options.maxWaiting ?? 10_000;
    if (!(this.concurrency >= 1)) throw new RangeError('concurrency must be at least 1');
  }

  /** Queues the environment's desired state, as observed now, and returns at once; throws `WriterFullError` when full. */
  submit(name: string, intent: EnvironmentIntent): void {
    const now = this.clock.now();
    this.enqueue(name, { intent, submittedAt: now, attempts: 0, observedAt: now, source: 'webhook' });
  }

  /**
   * Queues a desired state observed at `observedAt` (the resync: when its listing was read),
   * unless a newer one was submitted for `name` since; resolves when it is written
   * (`upserted`, `deleted`, `absent`) or dropped for a newer intent (`superseded`). Rejects
   * with the error when the cluster refuses it, or when it fails transiently the first time:
   * the writer keeps retrying it, but the caller need not wait for the cluster to come back.
   */
  write(name: string, intent: EnvironmentIntent, observedAt: number): Promise<EnvironmentWriteOutcome> {
    const newest = this.observed.get(name);
    if (newest !== undefined && newest > observedAt) {
      this.logger.info(
        { environment: name, op: intent.op },
        'PreviewEnvironment write dropped: a newer one was submitted after its state was read',
      );
      return Promise.resolve('superseded');
    }
    return new Promise((resolve, reject) => {
      const settle = (outcome: EnvironmentWriteOutcome | Error) => (outcome instanceof Error ? reject(outcome) : resolve(outcome));
      this.enqueue(name, { intent, submittedAt: this.clock.now(), attempts: 0, observedAt, source: 'resync', settle });
    });
  }

  private enqueue(name: string, queued: Queued): void {
    // A newer intent for a name already waiting takes its place: only a new name can overflow.
    if (this.waiting.size >= this.maxWaiting && !this.waiting.has(name)) throw new WriterFullError(this.maxWaiting);
    const { intent } = queued;
    this.remember(name, queued.observedAt);
    const replaced = this.waiting.get(name);
    if (replaced) {
      this.logger.info(
        { environment: name, op: replaced.intent.op, by: intent.op, attempts: replaced.attempts },
        'PreviewEnvironment write replaced by a newer one before it was made',
      );
      this.settle(replaced, 'superseded');
    }
    this.waiting.set(name, queued);
    // A newer intent is new work: it does not inherit the replaced one's backoff.
    const timer = this.backingOff.get(name);
    if (timer !== undefined) {
      this.clock.clearTimeout(timer);
      this.backingOff.delete(name);
    }
    if (!this.inFlight.has(name)) this.ready.add(name);
    this.pump();
  }

  /** Intents waiting (or waiting for a retry) plus writes in flight. */
  get pending(): number {
    return this.waiting.size + this.inFlight.size;
  }

  /** Resolves when nothing is waiting or in flight. */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * For shutdown: resolves when idle, or when `timeoutMs` has passed, with the number of
   * intents left unwritten. It keeps accepting meanwhile: deliveries answered 202 while the
   * server closes still get their write if there is time.
   */
  async drain(timeoutMs: number): Promise<number> {
    if (this.pending === 0) return 0;
    let timer: TimerHandle | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = this.clock.setTimeout(resolve, timeoutMs);
    });
    await Promise.race([this.idle(), expired]);
    this.clock.clearTimeout(timer);
    const left = this.pending;
    if (left > 0) {
      this.logger.warn(
        { left, inFlight: this.inFlight.size, timeoutMs },
        'PreviewEnvironment writes not made before the drain deadline; the resync repairs them',
      );
    }
    return left;
  }

  private pump(): void {
    while (this.inFlight.size < this.concurrency && this.ready.size > 0) {
      const name = this.ready.values().next().value as string;
      this.ready.delete(name);
      const queued = this.waiting.get(name)!;
      this.waiting.delete(name);
      this.start(name, queued);
    }
    this.notifyIfIdle();
  }

  private start(name: string, queued: Queued): void {
    this.inFlight.set(name, queued);
    queued.attempts += 1;
    this.makeWrite(name, queued.intent).then(
      (result) => this.written(name, queued, result),
      (err: unknown) => this.failed(name, queued, err),
    );
  }

  private async makeWrite(name: string, intent: EnvironmentIntent): Promise<Exclude<EnvironmentWriteResult, 'failed'>> {
    if (intent.op === 'delete') {
      const { updatedAt, repository } = intent;
      return this.store.delete(name, { ...(updatedAt !== undefined ? { updatedAt } : {}), ...(repository ? { repository } : {}) });
    }
    const result = await this.store.upsert(name, intent.spec, { deliveredAt: intent.deliveredAt });
    return result === 'stale' ? 'stale' : 'upserted';
  }

  private written(name: string, queued: Queued, result: Exclude<EnvironmentWriteResult, 'failed'>): void {
    this.finish(name);
    const write = this.outcome(name, queued, result);
    this.logger.info(
      { ...write },
      result === 'stale' ? 'PreviewEnvironment not written: it records a newer update of the pull request' : 'PreviewEnvironment written',
    );
    this.report(write);
    this.settle(queued, result);
    this.pump();
  }

  private failed(name: string, queued: Queued, err: unknown): void {
    this.finish(name);
    const where = { environment: name, op: queued.intent.op, attempts: queued.attempts };
    if (!isTransient(err)) {
      this.failures += 1;
      const write = this.outcome(name, queued, 'failed');
      this.logger.error({ ...write, err }, 'the cluster refused the PreviewEnvironment write; not retried (the resync will try again)');
      this.report(write);
      this.settle(queued, toKubeError(err));
    } else if (this.waiting.has(name)) {
      this.logger.info({ ...where, err }, 'PreviewEnvironment write failed; a newer one replaces it');
      this.settle(queued, 'superseded');
    } else {
      this.settle(queued, toKubeError(err));
      const delayMs = this.retryDelay(queued.attempts, err);
      this.logger.warn({ ...where, err, retryInMs: delayMs }, 'PreviewEnvironment write failed; retrying');
      this.waiting.set(name, queued);
      this.backingOff.set(
        name,
        this.unref(
          this.clock.setTimeout(() => {
            this.backingOff.delete(name);
            this.ready.add(name);
            this.pump();
          }, delayMs),
        ),
      );
    }
    this.pump();
  }

  /** Tells a `write` caller how its intent ended, once. */
  private settle(queued: Queued, outcome: EnvironmentWriteOutcome | Error): void {
    const settle = queued.settle;
    queued.settle = undefined;
    settle?.(outcome);
  }

  /** Records the newest observation for `name`, and forgets those older than the memory. */
  private remember(name: string, observedAt: number): void {
    const newest = Math.max(observedAt, this.observed.get(name) ?? observedAt);
    this.observed.delete(name);
    this.observed.set(name, newest);
    const cutoff = this.clock.now() - this.observationMemoryMs;
    for (const [key, at] of this.observed) {
      if (at >= cutoff) break;
      this.observed.delete(key);
    }
  }

  /** The write for `name` is over: a newer intent that waited for it may start. */
  private finish(name: string): void {
    this.inFlight.delete(name);
    if (this.waiting.has(name) && !this.backingOff.has(name)) this.ready.add(name);
  }

  private outcome(name: string, queued: Queued, result: EnvironmentWriteResult): EnvironmentWrite {
    return {
      environment: name,
      source: queued.source,
      op: queued.intent.op,
      result,
      attempts: queued.attempts,
      durationMs: this.clock.now() - queued.submittedAt,
    };
  }

  private report(write: EnvironmentWrite): void {
    try {
      this.observe(write);
    } catch (err) {
      this.logger.error({ err, environment: write.environment }, 'observing a PreviewEnvironment write failed');
    }
  }

  /** Jittered exponential backoff, and never sooner than the server asked (429 Retry-After). */
  private retryDelay(attempts: number, err: unknown): number {
    const nominal = Math.min(this.initialDelayMs * 2 ** (attempts - 1), this.maxDelayMs);
    const jittered = nominal * (0.5 + this.random() / 2);
    const kubeError = toKubeError(err);
    const asked = kubeError instanceof TransientError ? (kubeError.retryAfterMs ?? 0) : 0;
    return Math.max(jittered, Math.min(asked, this.maxDelayMs));
  }

  /** A retry waiting must not keep the process alive by itself (after a drain, at exit). */
  private unref(handle: TimerHandle): TimerHandle {
    (handle as { unref?: () => void } | null)?.unref?.();
    return handle;
  }

  private notifyIfIdle(): void {
    if (this.pending > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
