// Which scenarios run, in which order, with which counts. The independent ones first (intake,
// rendering, the apply baseline, resync), then the end-to-end ones against the operator
// process, which share its start-up: one PR at a time (2), then the burst (4), idle (5) and
// teardown (8) on the burst's environments. Each step gets a control plane of its own.
import type { BenchArgs } from './bench-args.js';
import type { BenchEnvironment } from './bench-environment.js';
import type { ScenarioResult } from './figures.js';
import { applyBaseline } from './scenario-apply-baseline.js';
import { endToEnd } from './scenario-end-to-end.js';
import { rendering } from './scenario-rendering.js';
import { resyncUnchanged } from './scenario-resync.js';
import { webhookIntake } from './scenario-webhook-intake.js';

export interface StepContext extends BenchArgs {
  outDir: string;
  log(line: string): void;
}

export type StepResult = Omit<ScenarioResult, 'durationMs'> & { durationMs?: number };

export interface Step {
  scenarios: number[];
  title: string;
  run(env: BenchEnvironment, ctx: StepContext): Promise<StepResult[]>;
}

/** Counts per scenario: the issue's, or smaller with --quick. */
export function counts(quick: boolean) {
  return {
    intake: { deliveries: quick ? 300 : 2000, concurrency: 20, warmup: quick ? 100 : 500, openLoop: { perSecond: [100, 200], seconds: quick ? 1 : 10 } },
    renders: quick ? 40 : 200,
    sandboxRuns: quick ? 3 : 10,
    baselineRuns: quick ? 3 : 10,
    resyncPullRequests: quick ? 50 : 200,
    onePr: quick ? 5 : 20,
    /** Unmeasured rounds of scenarios 2 and 3 before the measured ones. */
    warmupRounds: quick ? 1 : 10,
    burst: { pullRequests: quick ? 40 : 200, repositories: quick ? 5 : 20, withinMs: 2000 },
    idleMs: quick ? 30_000 : 120_000,
  };
}

export function scenarioPlan(args: BenchArgs): Step[] {
  const n = counts(args.quick);
  const wanted = new Set(args.scenarios);
  const steps: Step[] = [];
  if (wanted.has(1)) steps.push({ scenarios: [1], title: 'Webhook intake', run: async (env) => [await webhookIntake(env, n.intake)] });
  if (wanted.has(7)) steps.push({ scenarios: [7], title: 'Rendering', run: async (_env, ctx) => [await rendering({ renders: n.renders, sandboxRuns: n.sandboxRuns, log: ctx.log })] });
  if (wanted.has(6)) steps.push({ scenarios: [6], title: 'Resync, nothing changed', run: async (env) => [await resyncUnchanged(env, { pullRequests: n.resyncPullRequests })] });
  const e2e = [2, 3, 4, 5, 8].filter((s) => wanted.has(s));
  if (e2e.length === 1 && e2e[0] === 3) {
    steps.push({ scenarios: [3], title: 'The limit: minimal apply loop', run: async (env, ctx) => [await applyBaseline(env, { runs: n.baselineRuns, log: ctx.log })] });
  } else if (e2e.length > 0) {
    steps.push({
      scenarios: e2e,
      title: 'End to end (operator process)',
      run: (env, ctx) => endToEnd(env, { ...ctx, scenarios: e2e, counts: n }),
    });
  }
  return steps;
}
