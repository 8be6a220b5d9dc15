// The operator's own resource use, from /proc/<pid> (Linux): peak and current resident memory
// (VmHWM, VmRSS) and CPU seconds (utime + stime, and its exited children's: git, the sandbox).
import { readFile, writeFile } from 'node:fs/promises';

/** USER_HZ: the kernel's ticks per second in /proc/<pid>/stat (100 on every Linux Node supports). */
const clockTicks = 100;

/** Parses /proc/<pid>/status and /proc/<pid>/stat (pure, for tests). */
export function parseProcessUsage(statusText: string, statText: string) {
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(statusText)?.[1] ?? NaN) / 1024;
  // The command name may hold spaces and parentheses: fields start after the last ')'. utime,
  // stime, cutime, cstime are fields 14–17 of stat: 11–14 after the command name.
  const fields = statText.slice(statText.lastIndexOf(')') + 2);
  const f = fields.split(' ').map(Number);
  return { peakRssMb: kb('VmHWM'), rssMb: kb('VmRSS'), cpuSeconds: (f[11]! + f[12]! + f[13]! + f[14]!) / clockTicks };
}

export async function processUsage(pid: number) {
  return parseProcessUsage(await readFile(`/proc/${pid}/status`, 'utf8'), await readFile(`/proc/${pid}/stat`, 'utf8'));
}

/** Resets the peak RSS to the current RSS (`5` to clear_refs, Linux ≥ 4.0): a later VmHWM is the peak since. */
export async function resetPeakRss(pid: number): Promise<boolean> {
  const reset = writeFile(`/proc/${pid}/clear_refs`, '5');
  return reset.then(() => true).catch(() => false);
}
