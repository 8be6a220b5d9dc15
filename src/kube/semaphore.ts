// A counting semaphore: at most `limit` holders at once, released in FIFO order so no
// caller starves.
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  /** Holders right now. */
  get inUse(): number {
    return this.active;
  }

  /** Callers waiting for a slot right now. */
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active += 1;
      return Promise.resolve();
    }
    // The slot is handed over directly by release(), so `active` never dips below the true count.
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active -= 1;
  }
}
