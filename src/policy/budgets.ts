// Budgets the PreviewEnvironment controller enforces: how long an environment lives after its
// last deployment (TTL) and how many environments one repository may run at once.

/** The durations `spec.ttl` accepts (the CRD's pattern): Go's syntax without sign or `µs`. */
export const durationPattern = /^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$/;

const nanosPerUnit: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go's time.Duration is an int64 of nanoseconds; longer durations do not parse there (nor in CEL). */
const maxDurationNanos = 2n ** 63n - 1n;

/** The CRD's CEL rule: `duration(self) >= duration('1m')`. */
export const minimumTtlMs = 60_000;

export class DurationError extends Error {
  constructor(
    readonly text: string,
    reason: string,
  ) {
    super(`invalid duration "${text}": ${reason}`);
    this.name = 'DurationError';
  }
}

/** Durations parsed so far: an operator meets a handful (its TTL settings, a few specs), each in every reconcile. */
const parsedDurations = new Map<string, number>();
const parsedDurationsKept = 256;

/** Parses a Go-style duration (`72h`, `90m`, `1h30m`, `1.5h`) into milliseconds (truncated, as Go does). */
export function parseDuration(text: string): number {
  const known = parsedDurations.get(text);
  if (known !== undefined) return known;
  const ms = parseDurationText(text);
  if (parsedDurations.size >= parsedDurationsKept) parsedDurations.clear();
  parsedDurations.set(text, ms);
  return ms;
}

function parseDurationText(text: string): number {
  if (!durationPattern.test(text))
    throw new DurationError(text, 'expected a number and unit, e.g. 72h, 90m or 1h30m (units ns, us, ms, s, m, h)');
  let total = 0n;
  for (const [, whole, fraction = '', unit] of text.matchAll(/([0-9]+)(?:\.([0-9]+))?(ns|us|ms|s|m|h)/g)) {
    const per = nanosPerUnit[unit!]!;
    total += BigInt(whole!) * per;
    if (fraction) total += (BigInt(fraction) * per) / 10n ** BigInt(fraction.length);
    if (total > maxDurationNanos) throw new DurationError(text, 'longer than the maximum duration (about 292 years)');
  }
  return Number(total / 1_000_000n);
}

/** Why `text` is not a valid TTL, or undefined when it is. */
export function ttlProblem(text: string): string | undefined {
  try {
    if (parseDuration(text) < minimumTtlMs) return 'must be at least 1m';
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

/** Where an environment's TTL came from (see `effectiveTtl`). */
export type TtlSource = 'spec' | 'repository' | 'policy' | 'policy-cap';

/**
 * The TTL an environment lives by. `spec.ttl` (set on the PreviewEnvironment by hand) wins; then
 * the repository's `ttl` from `.preview/preview.yaml`, then the policy's default — either one
 * shortened to the policy's `maxTtl` when it is longer. Unparseable values were refused earlier
 * (the CRD, the config validation); one here is treated as longer than any cap.
 */
export function effectiveTtl(
  specTtl: string | undefined,
  repositoryTtl: string | undefined,
  budgets: { ttl: string; maxTtl?: string | null },
): { ttl: string; source: TtlSource } {
  if (specTtl) return { ttl: specTtl, source: 'spec' };
  const wanted = repositoryTtl ?? budgets.ttl;
  const source: TtlSource = repositoryTtl !== undefined ? 'repository' : 'policy';
  const cap = budgets.maxTtl;
  if (!cap || durationMs(wanted) <= durationMs(cap)) return { ttl: wanted, source };
  return { ttl: cap, source: 'policy-cap' };
}

function durationMs(text: string): number {
  try {
    return parseDuration(text);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** When an environment deployed at `lastDeploy` expires: lastDeploy + TTL. */
export function expiresAt(lastDeploy: Date | string, ttl: string): Date {
  const start = typeof lastDeploy === 'string' ? new Date(lastDeploy) : lastDeploy;
  if (Number.isNaN(start.getTime())) throw new RangeError(`invalid last deployment time: ${String(lastDeploy)}`);
  return new Date(start.getTime() + parseDuration(ttl));
}

export interface SlotCandidate {
  /** The pull request number. */
  number: number;
  /** Already deploying or deployed (it counts against the cap). */
  holdsSlot: boolean;
}

export interface SlotAllocation {
  /** PR numbers that may deploy now, ascending: every slot holder, then newcomers while slots are free. */
  deploy: number[];
  /** PR numbers that wait as `Queued`, ascending: the first one gets the next free slot. */
  queued: number[];
}

/**
 * The per-repository cap (`null`: no cap). Environments holding a slot keep it even when
 * the cap was lowered below their count — a running preview is never torn down by a
 * budget change; the excess drains as PRs close. Free slots go to waiting environments
 * in PR-number order, so the queue is fair and every reconcile agrees on it.
 */
export function allocateSlots(environments: readonly SlotCandidate[], cap: number | null): SlotAllocation {
  const byNumber = [...environments].sort((a, b) => a.number - b.number);
  const holders = byNumber.filter((e) => e.holdsSlot).map((e) => e.number);
  const waiting = byNumber.filter((e) => !e.holdsSlot).map((e) => e.number);
  if (cap === null) return { deploy: byNumber.map((e) => e.number), queued: [] };
  const free = Math.max(0, cap - holders.length);
  const admitted = waiting.slice(0, free);
  return {
    deploy: [...holders, ...admitted].sort((a, b) => a - b),
    queued: waiting.slice(free),
  };
}
