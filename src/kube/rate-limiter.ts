// Per-key backoff and an overall token bucket, combined as client-go's default controller
// rate limiter: the delay for a key is the larger of the two.
import { systemClock, type Clock } from './clock.js';

/** Decides how long a key waits before it is processed again. */
export interface RateLimiter {
  /** The delay (ms) for this key's next retry; counts as one retry. */
  when(key: string): number;
  /** Stops tracking the key (it succeeded): its next failure starts from the base delay. */
  forget(key: string): void;
  /** Retries counted for the key since it was last forgotten. */
  numRequeues(key: string): number;
}

/** base × 2^failures per key, capped: 5 ms, 10 ms, 20 ms, … up to 1000 s by default. */
export class ExponentialBackoffRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    readonly baseMs = 5,
    readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    const delay = this.baseMs * 2 ** exp;
    return Number.isFinite(delay) && delay < this.maxMs ? delay : this.maxMs;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** An overall token bucket (qps refill, `burst` capacity), as golang.org/x/time/rate reservations. */
export class TokenBucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps = 10,
    readonly burst = 100,
    private readonly clock: Clock = systemClock,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.qps);
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The largest delay of several limiters (every limiter records the retry). */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    let delay = 0;
    for (const limiter of this.limiters) delay = Math.max(delay, limiter.when(key));
    return delay;
  }

  forget(key: string): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  numRequeues(key: string): number {
    let n = 0;
    for (const limiter of this.limiters) n = Math.max(n, limiter.numRequeues(key));
    return n;
  }
}

/** client-go's default: per-key 5 ms doubling to 1000 s, and overall 10/s with bursts of 100. */
export function defaultControllerRateLimiter(clock: Clock = systemClock): RateLimiter {
  return new MaxOfRateLimiter(new ExponentialBackoffRateLimiter(5, 1_000_000), new TokenBucketRateLimiter(10, 100, clock));
}
