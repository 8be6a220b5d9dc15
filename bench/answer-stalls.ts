// Why a closed loop's p99 is what it is. With C requests always in flight, one stall of the
// receiver (a GC pause, its thread waiting for a core) or of the client delays every request in
// flight at once, and they are answered together: C answers of N are C/N of the samples, 1 % for
// 20 of 2,000. So one stall can set the p99 by itself. This finds out whether it did: the slowest
// 1 % of the answers, grouped by when they were read.

export interface EndedAnswer {
  /** Answer time. */
  ms: number;
  /** When its last byte was read (performance.now() of the reading process). */
  endedAt: number;
}

export interface SlowestAnswerGroups {
  /** The slowest 1 % (at least one): 20 of 2,000. */
  slowest: number;
  /** Runs of them read one after the other, each within `withinMs` of the one before. */
  groups: number;
  /** The most answers in one group. */
  largest: number;
}

/** The slowest 1 % of the answers, in groups that ended together (0 groups for no answers). */
export function slowestAnswerGroups(answers: readonly EndedAnswer[], withinMs = 1): SlowestAnswerGroups {
  if (answers.length === 0) return { slowest: 0, groups: 0, largest: 0 };
  const slowest = [...answers].sort((a, b) => b.ms - a.ms).slice(0, Math.ceil(answers.length / 100));
  const ends = slowest.map((a) => a.endedAt).sort((a, b) => a - b);
  let groups = 1;
  let size = 1;
  let largest = 1;
  for (let i = 1; i < ends.length; i++) {
    if (ends[i]! - ends[i - 1]! <= withinMs) {
      size += 1;
    } else {
      groups += 1;
      size = 1;
    }
    largest = Math.max(largest, size);
  }
  return { slowest: ends.length, groups, largest };
}
