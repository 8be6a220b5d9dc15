// The machine's speed while a scenario runs (a bench child, compiled like the operator): every
// interval, the fixed work of machine-speed.ts, timed by the CPU time this process spent on it
// rather than by the clock. Waiting for a core is left out, so what is left is how fast a core
// ran the work — slower when the host gives this virtual machine less of its cores (the guest
// sees no steal time here), or when the other processes crowd the caches. The CPU time is the
// process's: the bench pins the probe to one core, so its collector's helper threads run there
// too and their time is the same work's (unpinned, it can exceed the clock's). One JSON line per
// sample on stdout: {"speedProbe": {"at": <epoch ms>, "cpuMs": …, "wallMs": …}}.
import { fixedCpuWork } from './machine-speed.js';

// Both from the bench (speed-probe-recorder.ts holds the defaults).
const [intervalMs = Number.NaN, roundTrips = Number.NaN] = process.argv.slice(2, 4).map(Number);
if (!(intervalMs > 0 && roundTrips > 0)) throw new Error(`usage: speed-probe <interval ms> <round trips>; got ${process.argv.slice(2).join(' ') || 'nothing'}`);

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const sample = () => {
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  fixedCpuWork(roundTrips);
  const line = { speedProbe: { at: Date.now(), cpuMs: cpuMs() - cpu0, wallMs: performance.now() - wall0 } };
  process.stdout.write(`${JSON.stringify(line)}\n`);
};

// The first rounds compile the work: they are run before the first sample is written.
fixedCpuWork(roundTrips * 4);
setInterval(sample, intervalMs);
process.stdout.write(`${JSON.stringify({ speedProbe: 'started' })}\n`);
