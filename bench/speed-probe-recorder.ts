// Runs bench/speed-probe.ts on each core beside a scenario and keeps the samples, so that a figure
// measured on this shared machine comes with how fast each core ran meanwhile, against a quiet
// moment before it. One per core, pinned: the two virtual cores of this machine have been seen
// running the same work 1.5× apart for minutes at a time (the host's other tenants), and the
// guest is told nothing of it (no steal time).
import { availableParallelism } from 'node:os';
import { startBenchChild, type JsonLineChild } from './child-process.js';
import { percentile } from './stats.js';

/** How often a probe samples, and how much work each sample is (about 7 ms at full speed: 0.7 % of a core). */
const speedProbeIntervalMs = 1000;
const speedProbeRoundTrips = 300;

export interface SpeedSample {
  /** When the work ended (epoch ms). */
  at: number;
  /** CPU time the probe spent on the fixed work. */
  cpuMs: number;
  wallMs: number;
}

/** Epoch ms, both ends included. */
export interface TimeWindow {
  from: number;
  to: number;
}

export interface SpeedComparison {
  quietSamples: number;
  duringSamples: number;
  /** Medians of the fixed work's CPU ms in each window. */
  quietMs: number;
  duringMs: number;
  /** The 10th and 90th percentiles and the mean during the window measured (a core lost in long stretches moves the mean, not the median). */
  duringP10Ms: number;
  duringP90Ms: number;
  duringMeanMs: number;
  /** duringMs ÷ quietMs: above 1, a core ran the same work slower. NaN without samples in either. */
  slowdown: number;
}

/** Compares the samples taken `during` a measurement with those taken in a `quiet` window (pure, for tests). */
export function compareSpeed(samples: readonly SpeedSample[], quiet: TimeWindow, during: TimeWindow): SpeedComparison {
  const within = (w: TimeWindow) => samples.filter((s) => s.at >= w.from && s.at <= w.to).map((s) => s.cpuMs).sort((a, b) => a - b);
  const q = within(quiet);
  const d = within(during);
  const quietMs = percentile(q, 50);
  const duringMs = percentile(d, 50);
  return {
    quietSamples: q.length, duringSamples: d.length, quietMs, duringMs,
    duringP10Ms: percentile(d, 10), duringP90Ms: percentile(d, 90),
    duringMeanMs: d.length > 0 ? d.reduce((sum, x) => sum + x, 0) / d.length : Number.NaN,
    slowdown: q.length > 0 && d.length > 0 ? duringMs / quietMs : Number.NaN,
  };
}

/** One line for a scenario's notes: each core's comparison, in core order. */
export function speedNote(perCore: readonly SpeedComparison[], what: string): string {
  const cores = perCore.map((c, core) => Number.isFinite(c.slowdown)
    ? `core ${core} median ${c.duringMs.toFixed(1)} ms of CPU (p10 ${c.duringP10Ms.toFixed(1)}, p90 ${c.duringP90Ms.toFixed(1)}, mean ${c.duringMeanMs.toFixed(1)}; ${c.duringSamples} samples) against ${c.quietMs.toFixed(1)} ms in the quiet seconds before (${c.quietSamples} samples): ×${c.slowdown.toFixed(2)}`
    : `core ${core} no samples ${c.quietSamples === 0 ? 'in the quiet seconds before' : what}`);
  return `Each core's speed ${what} (bench/speed-probe.ts: a fixed piece of JSON work every ${speedProbeIntervalMs} ms in a process pinned to the core, timed by its CPU time, so waiting for the core is left out): ${cores.join('; ')}.`;
}

/** The cores' medians during the window measured, in one figure's words: "12.1 / 18.3". */
export function perCoreMs(perCore: readonly SpeedComparison[]): string {
  return perCore.map((c) => c.duringMs.toFixed(1)).join(' / ');
}

/**
 * A probe pinned to each core (0 … n−1), with their samples in the quiet seconds after they
 * started. Probes that cannot run (no taskset, a restricted CPU set, no samples) leave `error` and
 * no probes: they cost their figures, not the measurement beside them.
 */
export class CoreSpeedProbes {
  private constructor(private readonly probes: SpeedProbe[], readonly quiet: TimeWindow, readonly error?: Error) {}

  static async start(quietSamples = 3): Promise<CoreSpeedProbes> {
    const started = await Promise.allSettled(Array.from({ length: availableParallelism() }, (_, cpu) => SpeedProbe.start(cpu)));
    const probes = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const from = Date.now();
    const error = failed ? (failed.reason as Error) : await Promise.all(probes.map((p) => p.waitForSamples(quietSamples))).then(() => undefined, (err: Error) => err);
    if (error) {
      await Promise.all(probes.map((p) => p.stop()));
      return new CoreSpeedProbes([], { from, to: Date.now() }, error);
    }
    return new CoreSpeedProbes(probes, { from, to: Date.now() });
  }

  /** The probes' processes by name, for where the machine's CPU went. */
  pids(): Record<string, number> {
    return Object.fromEntries(this.probes.map((p, core) => [`speed probe (core ${core})`, p.pid]));
  }

  /** Each core's samples in `during` against its quiet ones; none without probes. */
  compare(during: TimeWindow): SpeedComparison[] {
    return this.probes.map((p) => compareSpeed(p.samples(), this.quiet, during));
  }

  /** Every sample of every core with both windows (for comparing runs later); undefined without probes. */
  samplesJson(during: TimeWindow): string | undefined {
    return this.probes.length > 0 ? `${JSON.stringify({ quiet: this.quiet, burst: during, cores: this.probes.map((p) => p.samples()) })}\n` : undefined;
  }

  async stop(): Promise<void> {
    await Promise.all(this.probes.map((p) => p.stop()));
  }
}

/** One probe process pinned to a core, and the samples it wrote. */
class SpeedProbe {
  private readonly taken: SpeedSample[] = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly child: JsonLineChild) {}

  /** Starts a probe pinned to `cpu`; resolves once it has compiled its work and samples. */
  static async start(cpu: number): Promise<SpeedProbe> {
    const child = startBenchChild('speed-probe', [String(speedProbeIntervalMs), String(speedProbeRoundTrips)], {}, { cpu });
    try {
      await child.nextJson(30_000, (v) => v?.speedProbe === 'started');
    } catch (err) {
      await child.stop(1000);
      throw err;
    }
    const probe = new SpeedProbe(child);
    void probe.collect();
    return probe;
  }

  get pid(): number {
    return this.child.child.pid!;
  }

  samples(): readonly SpeedSample[] {
    return this.taken;
  }

  /** Resolves once `count` samples have been taken from now on (or rejects after `timeoutMs`). */
  async waitForSamples(count: number, timeoutMs = 30_000): Promise<void> {
    const target = this.taken.length + count;
    const deadline = Date.now() + timeoutMs;
    while (this.taken.length < target) {
      if (this.child.hasExited()) throw new Error(`the speed probe exited:\n${this.child.stderrTail()}`);
      if (Date.now() > deadline) throw new Error(`the speed probe took ${count - (target - this.taken.length)} of ${count} samples in ${timeoutMs} ms`);
      // Woken by the next sample, or after two intervals to look at the child and the deadline again.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, speedProbeIntervalMs * 2);
      });
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    await this.child.stop(5000);
  }

  private async collect(): Promise<void> {
    for (;;) {
      let value: { speedProbe: SpeedSample };
      try {
        value = await this.child.nextJson<{ speedProbe: SpeedSample }>(3_600_000, (v) => typeof v?.speedProbe?.at === 'number');
      } catch {
        return; // stopped (or died: waitForSamples says so)
      }
      this.taken.push(value.speedProbe);
      for (const wake of this.waiters.splice(0)) wake();
    }
  }
}
