// A work queue with client-go's semantics: duplicate adds collapse; a key is never handed
// to two workers at once; a key added while being processed is processed once more after
// `done`; failures wait per-key backoff; shutdown can drain in-flight work.
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface WorkQueueOptions {
  /** Default: `defaultControllerRateLimiter()` (5 ms doubling to 1000 s, 10/s burst 100). */
  rateLimiter?: RateLimiter;
  clock?: Clock;
  /** Told the number of keys waiting to be handed out, whenever it changes. */
  onDepthChange?: (depth: number) => void;
}

export class WorkQueue {
  /** Keys ready to hand out, in order. Every key here is also in `dirty`. */
  private queue: string[] = [];
  private head = 0;
  /** Keys that need processing (queued, or re-added while processing). */
  private readonly dirty = new Set<string>();
  /** Keys handed to a worker and not yet `done`. */
  private readonly processing = new Set<string>();
  /** Keys waiting for their `addAfter` delay, with the earliest due time. */
  private readonly waiting = new Map<string, { at: number; timer: TimerHandle }>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private readonly drainWaiters: (() => void)[] = [];
  private shuttingDown = false;
  private dispatchScheduled = false;
  private lastDepth = 0;
  private readonly rateLimiter: RateLimiter;
  private readonly clock: Clock;
  private readonly onDepthChange?: (depth: number) => void;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.onDepthChange = options.onDepthChange;
  }

  /** Marks the key as needing processing. No-op if already queued, or after shutdown. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    // Re-queued by `done` once the current worker finishes.
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.dispatch();
  }

  /** Adds the key after `delayMs`; if it is already waiting, the earlier time wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const at = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.at <= at) return;
    if (existing) this.clock.clearTimeout(existing.timer);
    const timer = this.clock.setTimeout(() => {
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.waiting.set(key, { at, timer });
  }

  /** Adds the key after its rate-limited backoff (a failure). */
  addRateLimited(key: string): void {
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** Resets the key's backoff (it succeeded). */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  /** Failures counted for the key since it was last forgotten. */
  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting until there is one. Resolves `undefined` once the
   * queue is shut down. Every key received must be passed to `done`.
   */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Ends processing of the key; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.queue.push(key);
      this.dispatch();
    }
    if (this.processing.size === 0) for (const resolve of this.drainWaiters.splice(0)) resolve();
  }

  /** Keys waiting to be handed out. */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Keys handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delay. */
  delayed(): number {
    return this.waiting.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops at once: no more keys are handed out, pending adds and delays are dropped. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) this.clock.clearTimeout(timer);
    this.waiting.clear();
    this.queue = [];
    this.head = 0;
    for (const key of [...this.dirty]) if (!this.processing.has(key)) this.dirty.delete(key);
    this.reportDepth();
    for (const resolve of this.getters.splice(0)) resolve(undefined);
  }

  /**
   * Shuts down, then waits until the keys being processed are done, at most `deadlineMs`.
   * Resolves true if everything in flight finished in time.
   */
  async shutDownWithDrain(deadlineMs: number): Promise<boolean> {
    this.shutDown();
    if (this.processing.size === 0) return true;
    let timer: TimerHandle | undefined;
    const drained = new Promise<boolean>((resolve) => this.drainWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => {
      timer = this.clock.setTimeout(() => resolve(false), deadlineMs);
    });
    const result = await Promise.race([drained, late]);
    this.clock.clearTimeout(timer);
    return result;
  }

  private take(): string | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    this.reportDepth();
    return key;
  }

  /**
   * Hands queued keys to waiting workers once the code that added them has run to its end (a
   * microtask later): the adds of one watch chunk's events — an update adds for its old object and
   * its new one — collapse into one reconcile instead of one now and one after it.
   */
  private dispatch(): void {
    this.reportDepth();
    if (this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    queueMicrotask(() => {
      this.dispatchScheduled = false;
      while (this.getters.length > 0 && this.len() > 0) this.getters.shift()!(this.take());
      this.reportDepth();
    });
  }

  private reportDepth(): void {
    const depth = this.len();
    if (depth !== this.lastDepth) {
      this.lastDepth = depth;
      this.onDepthChange?.(depth);
    }
  }
}
