// GitHub's primary rate limit per credential (the x-ratelimit-* headers) and the rules a
// well-behaved client must follow when told to slow down. A request that breaks a rule is
// a violation: GitHub may ban integrations that keep sending while limited.

export interface RateLimitBucket {
  limit: number;
  used: number;
  /** Epoch seconds when the window resets. */
  reset: number;
  resource: string;
}

export interface RateLimitOptions {
  /** Requests per window; GitHub gives 5,000/h to tokens and installations. */
  limit: number;
  windowSeconds: number;
}

export class RateLimits {
  private readonly buckets = new Map<string, RateLimitBucket>();
  private readonly blockedUntil = new Map<string, { until: number; why: string }>();
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly options: RateLimitOptions = { limit: 5000, windowSeconds: 3600 }) {}

  bucket(key: string, nowMs = Date.now()): RateLimitBucket {
    let b = this.buckets.get(key);
    const now = Math.floor(nowMs / 1000);
    if (!b || b.reset <= now) {
      b = { limit: b?.limit ?? this.options.limit, used: 0, reset: now + this.options.windowSeconds, resource: 'core' };
      this.buckets.set(key, b);
    }
    return b;
  }

  remaining(b: RateLimitBucket): number {
    return Math.max(0, b.limit - b.used);
  }

  consume(key: string): RateLimitBucket {
    const b = this.bucket(key);
    b.used += 1;
    return b;
  }

  /** Force a bucket's state, e.g. to exhaust it in a test. */
  set(key: string, values: { remaining?: number; limit?: number; resetInSeconds?: number }): void {
    const b = this.bucket(key);
    if (values.limit !== undefined) b.limit = values.limit;
    if (values.remaining !== undefined) b.used = b.limit - values.remaining;
    if (values.resetInSeconds !== undefined) b.reset = Math.floor(Date.now() / 1000) + values.resetInSeconds;
  }

  headers(b: RateLimitBucket): Record<string, string> {
    return {
      'x-ratelimit-limit': String(b.limit),
      'x-ratelimit-remaining': String(this.remaining(b)),
      'x-ratelimit-used': String(b.used),
      'x-ratelimit-reset': String(b.reset),
      'x-ratelimit-resource': b.resource,
    };
  }

  /**
   * After a `retry-after` answer, or an answer saying `x-ratelimit-remaining: 0`, the
   * client must stay quiet until the time it was given.
   */
  block(key: string, untilMs: number, why: string): void {
    const current = this.blockedUntil.get(key);
    if (!current || current.until < untilMs) this.blockedUntil.set(key, { until: untilMs, why });
  }

  /** The rule this request breaks, if any, judged at its arrival time. */
  ruleBroken(key: string, nowMs: number): string | undefined {
    const blocked = this.blockedUntil.get(key);
    if (blocked && nowMs < blocked.until) {
      return `request sent ${blocked.until - nowMs} ms before the end of the wait GitHub asked for (${blocked.why})`;
    }
    return undefined;
  }

  /** GitHub's secondary limit allows at most 100 concurrent requests per credential. */
  enter(key: string): number {
    const n = (this.inFlight.get(key) ?? 0) + 1;
    this.inFlight.set(key, n);
    return n;
  }

  leave(key: string): void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
  }
}
