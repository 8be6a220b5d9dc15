// Latency samples (work run so many at a time, each timed) and their summaries: nearest-rank
// percentiles (no interpolation, so a reported p99 is a time some request really took).

/** The nearest-rank percentile `p` (0..100) of `sorted` (ascending); NaN for no samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.max(1, Math.min(sorted.length, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

/** The median, p95, p99 and maximum of `samples` (NaN for none). */
export function summarize(samples: readonly number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const p = (q: number) => percentile(sorted, q);
  return { p50: p(50), p95: p(95), p99: p(99), max: p(100) };
}

/** Runs `work` on every item, `concurrency` at a time; the ms each took. */
export async function timed<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < items.length; i = next++) {
        const t = performance.now();
        await work(items[i]!);
        out.push(performance.now() - t);
      }
    }),
  );
  return out;
}

/** `a / b`, or NaN when either is missing or b is zero (a ratio of nothing is not 0). */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

/** "patch namespaces 3, create events 2": how many of each key, most first. */
export function countBy<T>(items: readonly T[], key: (item: T) => string): string {
  const m = new Map<string, number>();
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  const mostFirst = [...m.entries()].sort((a, b) => b[1] - a[1]);
  return mostFirst.map(([k, v]) => `${k} ${v}`).join(', ');
}
