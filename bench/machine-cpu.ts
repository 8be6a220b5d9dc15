// Where the machine's CPU went during a stretch of the bench: the two cores are shared by the
// operator, the control plane's components, the GitHub emulator and the bench's clients, so a
// slow scenario is explained only by all of them together. Read from /proc (Linux): per process
// utime+stime, and cutime+cstime — the CPU of its children that have exited (the operator's git
// processes) — and /proc/stat for the whole machine (what none of the named processes used is
// "other": the kernel's softirqs, this shell, other users).
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc times; 100 on every Linux this runs on. */
const clockTicks = 100;

export interface ProcessCpu {
  /** The process's own CPU seconds. */
  self: number;
  /** CPU seconds of its children that have exited and been waited for. */
  children: number;
}

export interface CpuSnapshot {
  processes: Record<string, ProcessCpu>;
  /** Every other process of the machine, by pid: its command name and CPU. */
  others: Map<number, ProcessCpu & { command: string }>;
  /** Busy CPU seconds of the whole machine (every core: user + nice + system + irq + softirq + steal). */
  machineBusy: number;
  /** Idle CPU seconds of the whole machine (idle + iowait). */
  machineIdle: number;
}

/** CPU seconds from a /proc/<pid>/stat text (pure, for tests). */
export function parseProcessCpu(statText: string): ProcessCpu {
  // The command name may contain spaces and parentheses: fields start after the last ')'.
  const fields = statText.slice(statText.lastIndexOf(')') + 2).split(' ').map(Number);
  // utime, stime, cutime, cstime are fields 14–17 of stat: 11–14 after the command name.
  return { self: (fields[11]! + fields[12]!) / clockTicks, children: (fields[13]! + fields[14]!) / clockTicks };
}

/** Busy and idle seconds from /proc/stat's first line (pure, for tests). */
export function parseMachineCpu(procStat: string): { busy: number; idle: number } {
  const cpu = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!cpu) throw new Error('/proc/stat has no "cpu" line');
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = cpu.trim().split(/\s+/).slice(1).map(Number);
  return { busy: (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / clockTicks, idle: (idle! + iowait!) / clockTicks };
}

/** The command name of a /proc/<pid>/stat text (field 2, without its parentheses). */
export function commandOf(statText: string): string {
  return statText.slice(statText.indexOf('(') + 1, statText.lastIndexOf(')'));
}

/** Now, for the named processes and every other one (a process that has exited is left out). */
export function cpuSnapshot(pids: Record<string, number>): CpuSnapshot {
  const named = new Map(Object.entries(pids).map(([name, pid]) => [pid, name]));
  const processes: Record<string, ProcessCpu> = {};
  const others: CpuSnapshot['others'] = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const pid = Number(entry);
    const name = named.get(pid);
    if (name) processes[name] = parseProcessCpu(stat);
    else others.set(pid, { command: commandOf(stat), ...parseProcessCpu(stat) });
  }
  const machine = parseMachineCpu(readFileSync('/proc/stat', 'utf8'));
  return { processes, others, machineBusy: machine.busy, machineIdle: machine.idle };
}

export interface CpuShare {
  name: string;
  seconds: number;
}

/** What each process (and its exited children, listed apart when any) used between two snapshots, largest first, then "other". */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): { shares: CpuShare[]; machineBusy: number; machineIdle: number } {
  const shares: CpuShare[] = [];
  for (const [name, end] of Object.entries(after.processes)) {
    const start = before.processes[name];
    if (!start) continue;
    shares.push({ name, seconds: end.self - start.self });
    const children = end.children - start.children;
    if (children > 0) shares.push({ name: `${name}'s child processes`, seconds: children });
  }
  // Unnamed processes by command (one started during the stretch counts whole).
  const byCommand = new Map<string, number>();
  for (const [pid, end] of after.others) {
    const start = before.others.get(pid);
    const used = start && start.command === end.command ? end.self - start.self : end.self;
    if (used > 0) byCommand.set(end.command, (byCommand.get(end.command) ?? 0) + used);
  }
  for (const [command, seconds] of byCommand) shares.push({ name: `other: ${command}`, seconds });
  shares.sort((a, b) => b.seconds - a.seconds);
  const machineBusy = after.machineBusy - before.machineBusy;
  const accounted = shares.reduce((sum, s) => sum + s.seconds, 0);
  // Processes that began and ended inside the stretch without a parent named here, and the kernel.
  shares.push({ name: 'other: processes gone since, and the kernel', seconds: Math.max(0, machineBusy - accounted) });
  return { shares, machineBusy, machineIdle: after.machineIdle - before.machineIdle };
}

/** One sentence for the results' notes. */
export function cpuNote(what: string, between: ReturnType<typeof cpuBetween>, wallSeconds: number): string {
  const cores = (between.machineBusy + between.machineIdle) / wallSeconds;
  const list = between.shares.filter((s) => s.seconds >= 0.05).map((s) => `${s.name} ${s.seconds.toFixed(1)} s`).join(', ');
  return `Machine CPU ${what}: ${between.machineBusy.toFixed(0)} busy CPU seconds of ${(between.machineBusy + between.machineIdle).toFixed(0)} `
    + `(${cores.toFixed(1)} cores × ${wallSeconds.toFixed(0)} s, ${((100 * between.machineBusy) / (between.machineBusy + between.machineIdle)).toFixed(0)} % busy): ${list}.`;
}
