// Scenarios 2–5 and 8 against the operator as its own process, on one control plane: first the
// bare bursts (before the operator runs, so its Algorithm controller does not act on them), then
// one PR at a time beside the bare loop, then each burst size in turn — the first followed by the
// idle period — each torn down before the next, so each starts from the same standing state. Or 9 alone.
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../src/kube/client.js';
import { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import { recordApiServerProfile } from './apiserver-profile.js';
import { bareBursts, bareClient, deleteNamespaces } from './bare-apply.js';
import type { BenchEnvironment } from './bench-environment.js';
import { benchPreviewYaml } from './bench-preview.js';
import { flatness, type CostWindow } from './environment-cost.js';
import { figure, type Measured, type ScenarioResult } from './figures.js';
import { Observer } from './observer.js';
import { startOperatorProcess, type OperatorProcess } from './operator-process.js';
import { burst } from './scenario-burst.js';
import { idle, settle, teardown } from './scenario-idle-teardown.js';
import { onePullRequest, tlsPullRequests } from './scenario-one-pr.js';
import type { StepContext } from './scenario-plan.js';

export interface EndToEnd {
  env: BenchEnvironment;
  ctx: StepContext;
  operator: OperatorProcess;
  observer: Observer;
  single: PullRequestDriver;
  burstRepos: PullRequestDriver[];
  bare: KubeClient;
  bareNamespaces: string[];
}

/** Each burst size, the first one followed by the idle period; scenario 4's, 5's and 8's results. */
async function bursts(e: EndToEnd, bareMs: ReadonlyMap<number, number>): Promise<ScenarioResult[]> {
  const { ctx } = e;
  const result = (scenario: number, title: string): ScenarioResult => ({ scenario, title, figures: [], notes: [] });
  const [b, idled, down] = [result(4, 'Burst'), result(5, 'Idle'), result(8, 'Teardown')];
  const add = (to: ScenarioResult, part: Measured) => void (to.figures.push(...part.figures), to.notes.push(...part.notes));
  const rss: Array<{ standing: number; mb: number }> = []; // after each burst and a resync pass
  const costs: CostWindow[] = [];
  try {
    for (const size of ctx.bursts) {
      const profiling = ctx.profile && costs.length === 0 ? recordApiServerProfile(e.env.cluster, ctx.outDir, ctx.log) : undefined;
      const outcome = await burst(e, size, bareMs.get(size));
      await profiling;
      costs.push(outcome.cost);
      add(b, outcome);
      if (ctx.scenarios.includes(5)) rss.push({ standing: e.observer.standing(), mb: await settle(e) });
      if (costs.length === 1 && ctx.scenarios.includes(5)) add(idled, await idle(e, ctx.counts.idleMs, e.observer.standing()));
      if (costs.length === 1 && ctx.heapSnapshot) ctx.log(`heap snapshot: ${await e.operator.heapSnapshot()}`);
      add(down, await teardown(e, `burst ${size}`, outcome.timelines));
    }
  } catch (err) {
    ctx.log(`bursts: ${(err as Error).stack ?? String(err)}`);
    b.error = (err as Error).message; // the sizes measured before it keep their figures
  }
  b.figures.push(...flatness(costs));
  const [few, many] = [rss[0], rss.at(-1)];
  if (few && many && many !== few) {
    const per100 = ((many.mb - few.mb) * 100) / (many.standing - few.standing);
    idled.figures.push(figure(5, `operator RSS per 100 standing environments, ${few.standing} → ${many.standing}`, per100, 'MB'));
  }
  return [b, idled, down].filter((r) => ctx.scenarios.includes(r.scenario));
}

export async function endToEnd(env: BenchEnvironment, ctx: StepContext): Promise<ScenarioResult[]> {
  const wanted = (...scenarios: number[]) => scenarios.some((s) => ctx.scenarios.includes(s));
  const sizes = wanted(4, 5, 8) ? ctx.bursts : [];
  const [secret, owner] = [randomBytes(20).toString('hex'), `bench-${randomBytes(2).toString('hex')}`];
  const initialFiles = { '.preview/preview.yaml': benchPreviewYaml };
  const create = (name: string) => PullRequestDriver.create(env.gh, { owner, name, webhookSecret: secret, initialFiles });
  const single = await create('single');
  const burstRepos = await Promise.all(Array.from({ length: Math.ceil(Math.max(0, ...sizes) / 10) }, (_, r) => create(`burst-${r}`)));
  const repos = [single, ...burstRepos];
  const bare = bareClient(env);
  const bareMs = await bareBursts(env, bare, wanted(3, 4) ? sizes : []);
  const cloneUrls = Object.fromEntries(repos.map((d) => [`${d.repository.owner}/${d.repository.name}`.toLowerCase(), d.cloneUrl]));
  const operator = await startOperatorProcess(env, { ...ctx, secret, cloneUrls, tls: wanted(9) });
  const observer = new Observer(env, operator, wanted(9));
  const e: EndToEnd = { env, ctx, operator, observer, single, burstRepos, bare, bareNamespaces: [] };
  const results: ScenarioResult[] = [];
  // A part that fails says so in the table; the others' figures stay.
  const attempt = async (scenarios: number[], part: () => Promise<ScenarioResult[]>) => {
    try {
      results.push(...(await part()));
    } catch (err) {
      ctx.log(`scenarios ${scenarios.join(', ')} failed: ${(err as Error).stack ?? String(err)}`);
      const error = (err as Error).message;
      const failed = scenarios.filter((s) => wanted(s));
      results.push(...failed.map((scenario) => ({ scenario, title: 'End to end', error, figures: [], notes: [] })));
    }
  };
  try {
    await observer.start();
    if (wanted(2, 3)) await attempt([2, 3], () => onePullRequest(e, ctx.counts.onePr, ctx.counts.warmups));
    if (sizes.length > 0) await attempt([4, 5, 8], () => bursts(e, bareMs));
    if (wanted(9)) await attempt([9], () => tlsPullRequests(e, ctx.counts.tlsPrs));
  } finally {
    await observer.stop();
    await operator.stop();
    await deleteNamespaces(env, e.bareNamespaces, 60_000);
    bare.close();
    for (const d of repos) await d.cleanup();
  }
  return results;
}
