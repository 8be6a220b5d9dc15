// A bounded memo of immutable answers (a listing at a SHA, a blob by its id): each key is
// loaded once, callers asking while it loads share that one load, and the least recently used
// answers are dropped when the count or the total weight is over its bound. Failures are not
// kept, so the next caller loads again.

export interface LruMemoOptions<V> {
  /** Most answers kept. */
  maxEntries: number;
  /** Most total weight kept (e.g. characters); an answer heavier than this alone is not kept. */
  maxWeight?: number;
  /** An answer's weight (default 1). */
  weigh?: (value: V) => number;
}

export class LruMemo<V> {
  private readonly settled = new Map<string, { value: V; weight: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  private weight = 0;

  constructor(private readonly options: LruMemoOptions<V>) {}

  /** Answers kept right now. */
  get size(): number {
    return this.settled.size;
  }

  /** Total weight kept right now. */
  get totalWeight(): number {
    return this.weight;
  }

  /** The answer for `key`: kept, being loaded, or loaded now by `load`. */
  get(key: string, load: () => Promise<V>): Promise<V> {
    const kept = this.settled.get(key);
    if (kept) {
      // Map order is insertion order: re-inserting makes it the most recently used.
      this.settled.delete(key);
      this.settled.set(key, kept);
      return Promise.resolve(kept.value);
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    const loaded = load().then(
      (value) => {
        this.loading.delete(key);
        this.keep(key, value);
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, loaded);
    return loaded;
  }

  private keep(key: string, value: V): void {
    const weight = this.options.weigh?.(value) ?? 1;
    const maxWeight = this.options.maxWeight ?? Number.POSITIVE_INFINITY;
    if (weight > maxWeight) return;
    this.settled.set(key, { value, weight });
    this.weight += weight;
    while (this.settled.size > this.options.maxEntries || this.weight > maxWeight) {
      const [oldest, entry] = this.settled.entries().next().value!;
      this.settled.delete(oldest);
      this.weight -= entry.weight;
    }
  }
}
