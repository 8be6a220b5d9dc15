// A process's own resource use, read from /proc (Linux): peak resident memory (VmHWM) and CPU
// seconds (utime + stime), so figures are the operator's and not the benchmark's.
import { readFileSync, writeFileSync } from 'node:fs';
import { parseProcessCpu } from './machine-cpu.js';

export interface ProcessUsage {
  /** Peak resident set size so far, MB. */
  peakRssMb: number;
  /** Current resident set size, MB. */
  rssMb: number;
  /** User + system CPU time consumed so far, seconds. */
  cpuSeconds: number;
}

/** Parses /proc/<pid>/status and /proc/<pid>/stat texts (pure, for tests). */
export function parseProcessUsage(statusText: string, statText: string): ProcessUsage {
  const kb = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(statusText);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  };
  return { peakRssMb: kb('VmHWM'), rssMb: kb('VmRSS'), cpuSeconds: parseProcessCpu(statText).self };
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
