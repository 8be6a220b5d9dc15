// GitHub may deliver the same event twice (a redelivery keeps its X-GitHub-Delivery id).
// Ids seen within a window are remembered in a bounded map, oldest first, so memory stays
// flat however many deliveries arrive.
import { systemClock, type Clock } from '../kube/clock.js';

export interface DeliveryDedupeOptions {
  /** How long an id is remembered (default 1 hour). */
  windowMs?: number;
  /** At most this many ids are remembered; the oldest are forgotten first (default 10,000). */
  maxEntries?: number;
  clock?: Clock;
}

export class DeliveryDedupe {
  readonly windowMs: number;
  readonly maxEntries: number;
  private readonly clock: Clock;
  /** id → when it was claimed; a Map iterates in insertion order, which is claim order. */
  private readonly seen = new Map<string, number>();

  constructor(options: DeliveryDedupeOptions = {}) {
    this.windowMs = options.windowMs ?? 3_600_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.clock = options.clock ?? systemClock;
    if (!(this.windowMs > 0) || !(this.maxEntries >= 1)) throw new RangeError('windowMs and maxEntries must be positive');
  }

  /** Records `id`; false when it was already recorded within the window (a duplicate). */
  claim(id: string): boolean {
    const now = this.clock.now();
    this.expire(now);
    if (this.seen.has(id)) return false;
    this.seen.set(id, now);
    while (this.seen.size > this.maxEntries) this.seen.delete(this.seen.keys().next().value as string);
    return true;
  }

  /** Forgets `id`, so that a redelivery is processed (its first attempt failed). */
  release(id: string): void {
    this.seen.delete(id);
  }

  get size(): number {
    return this.seen.size;
  }

  private expire(now: number): void {
    for (const [id, at] of this.seen) {
      if (now - at < this.windowMs) return;
      this.seen.delete(id);
    }
  }
}
