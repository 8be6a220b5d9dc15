// Which scenarios run, with which counts, each step on a control plane and GitHub emulator of its
// own (after scenario 1's thousands of writes the API server's RSS is 1.2 GB, and its collector's
// work grows with it): intake, rendering, resync, then end to end against the operator process
// (with TLS apart, on a control plane running cert-manager).
import type { BenchArgs } from './bench-args.js';
import type { BenchEnvironment } from './bench-environment.js';
import type { Measured, ScenarioResult } from './figures.js';
import { endToEnd } from './scenario-end-to-end.js';
import { rendering } from './scenario-rendering.js';
import { resyncUnchanged } from './scenario-resync.js';
import { webhookIntake } from './scenario-webhook-intake.js';

export const counts = (quick: boolean) => ({
  intake: { deliveries: quick ? 300 : 2000, concurrency: 20, warmup: quick ? 100 : 500 },
  renders: quick ? 40 : 200,
  sandboxRuns: quick ? 3 : 10,
  resyncPullRequests: quick ? 50 : 200,
  onePr: quick ? 5 : 20,
  tlsPrs: quick ? 3 : 10,
  /** Unmeasured rounds of scenarios 2 and 3 before the measured ones. */
  warmups: quick ? 2 : 10,
  idleMs: quick ? 30_000 : 120_000,
});

export interface StepContext extends BenchArgs {
  outDir: string;
  counts: ReturnType<typeof counts>;
  log(line: string): void;
}

export interface Step {
  title: string;
  /** The most environments the step deploys at once (its control plane gets nodes for them). */
  environments: number;
  certManager?: boolean;
  run(env: BenchEnvironment, ctx: StepContext): Promise<ScenarioResult[]>;
}

export function scenarioPlan(args: BenchArgs): Step[] {
  const n = counts(args.quick);
  const wanted = new Set(args.scenarios);
  const steps: Step[] = [];
  type Measure = (env: BenchEnvironment, ctx: StepContext) => Promise<Measured>;
  const one = (scenario: number, title: string, measure: Measure) => {
    if (!wanted.has(scenario)) return;
    steps.push({ title, environments: 0, run: async (env, ctx) => [{ scenario, title, ...(await measure(env, ctx)) }] });
  };
  one(1, 'Webhook intake', (env, ctx) => webhookIntake(env, { ...n.intake, outDir: ctx.outDir }));
  one(7, 'Rendering', () => rendering({ renders: n.renders, sandboxRuns: n.sandboxRuns }));
  one(6, 'Resync, nothing changed', (env) => resyncUnchanged(env, { pullRequests: n.resyncPullRequests }));
  // Each end-to-end step sees only its own scenarios: the operator runs with TLS for scenario 9 alone.
  const only = (...scenarios: number[]) => scenarios.filter((s) => wanted.has(s));
  const endToEndStep = (title: string, scenarios: number[], environments: number, certManager = false) => {
    if (scenarios.length > 0) steps.push({ title, environments, certManager, run: (env, ctx) => endToEnd(env, { ...ctx, scenarios }) });
  };
  endToEndStep('End to end (operator process)', only(2, 3, 4, 5, 8), Math.max(...args.bursts));
  endToEndStep('End to end with TLS (cert-manager)', only(9), 1, true);
  return steps;
}
