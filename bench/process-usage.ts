// A process's own resource use, read from /proc (Linux): peak resident memory (VmHWM) and CPU
// seconds (utime + stime), so figures are the operator's and not the benchmark's.
import { readFileSync, writeFileSync } from 'node:fs';

export interface ProcessUsage {
  /** Peak resident set size so far, MB. */
  peakRssMb: number;
  /** Current resident set size, MB. */
  rssMb: number;
  /** User + system CPU time consumed so far, seconds. */
  cpuSeconds: number;
}

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux this runs on. */
const clockTicks = 100;

/** Parses /proc/<pid>/status and /proc/<pid>/stat texts (pure, for tests). */
export function parseProcessUsage(statusText: string, statText: string): ProcessUsage {
  const kb = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(statusText);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  };
  // The command name (field 2) may contain spaces and parentheses: fields start after the last ')'.
  const fields = statText.slice(statText.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat, i.e. 11 and 12 after the command name.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return { peakRssMb: kb('VmHWM'), rssMb: kb('VmRSS'), cpuSeconds: (utime + stime) / clockTicks };
}

export function processUsage(pid: number): ProcessUsage {
  return parseProcessUsage(readFileSync(`/proc/${pid}/status`, 'utf8'), readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (`5` to /proc/<pid>/clear_refs, Linux
 * ≥ 4.0), so a later VmHWM is the peak of what happened since. False if the kernel refused.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
