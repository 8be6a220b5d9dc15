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

/** A thread's scheduling so far: time on a CPU, time runnable but waiting in a run queue for one, and its time slices. */
export interface ThreadSchedule {
  onCpuMs: number;
  waitingMs: number;
  slices: number;
}

/** Parses /proc/<pid>/task/<tid>/schedstat (`<on-cpu ns> <run-queue wait ns> <slices>`; pure, for tests). */
export function parseSchedstat(text: string): ThreadSchedule {
  const [onCpu, waiting, slices] = text.trim().split(/\s+/).map(Number);
  if (![onCpu, waiting, slices].every((n) => Number.isFinite(n))) throw new Error(`not a schedstat line: ${JSON.stringify(text)}`);
  return { onCpuMs: onCpu! / 1e6, waitingMs: waiting! / 1e6, slices: slices! };
}

/**
 * The scheduling of one thread (by default the process's main thread, whose id is the pid), or
 * undefined where the kernel keeps no schedstat (CONFIG_SCHED_INFO off).
 */
export function threadSchedule(pid: number, tid = pid): ThreadSchedule | undefined {
  try {
    return parseSchedstat(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** What a thread did between two readings. */
export function scheduleBetween(before: ThreadSchedule, after: ThreadSchedule): ThreadSchedule {
  return { onCpuMs: after.onCpuMs - before.onCpuMs, waitingMs: after.waitingMs - before.waitingMs, slices: after.slices - before.slices };
}
