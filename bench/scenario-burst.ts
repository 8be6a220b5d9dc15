// Scenario 4, a burst: `size` PRs opened across the burst repositories, their deliveries sent 10 ms
// apart, timed until every environment's Algorithm exists (all applied), every status is Ready and
// every comment says so. Against it, the bare burst (bare-apply.ts) of as many environments at the
// operator's concurrency, measured in the same run. Per environment: the operator's API writes
// (audit log, by verb and resource), CPU ms (/proc, first delivery → all comments) and GitHub requests.
import type { WebhookDelivery } from '../test/github-emulator/webhook-delivery.js';
import { costFigures, costNotes, type CostWindow } from './environment-cost.js';
import { atMost, figure, type Figure, type Measured, type Target } from './figures.js';
import { span, type Timeline } from './observer.js';
import { processUsage, resetPeakRss } from './process-usage.js';
import type { EndToEnd } from './scenario-end-to-end.js';
import { ratio, summarize } from './stats.js';

export interface BurstOutcome extends Measured {
  timelines: Timeline[];
  cost: CostWindow;
}

async function openPullRequests(e: EndToEnd, size: number): Promise<Array<{ t: Timeline; delivery: WebhookDelivery }>> {
  // Ten PRs per repository, whatever the size; commits made before the clock starts, sent round-robin.
  const repos = e.burstRepos.slice(0, Math.ceil(size / 10));
  const perRepo = await Promise.all(
    repos.map(async (repo, r) => {
      const list: Array<{ t: Timeline; delivery: WebhookDelivery }> = [];
      for (let k = r; k < size; k += repos.length) {
        const { delivery, pullRequest } = await repo.open({ files: { 'CHANGE.md': `burst ${k}\n` }, authorAssociation: 'MEMBER' });
        list.push({ t: { repo, number: pullRequest.number }, delivery });
      }
      return list;
    }),
  );
  return Array.from({ length: size }, (_, k) => perRepo[k % repos.length]![Math.floor(k / repos.length)]!);
}

export async function burst(e: EndToEnd, size: number, bareMs: number | undefined): Promise<BurstOutcome> {
  const planned = await openPullRequests(e, size);
  const timelines = planned.map((p) => p.t);
  const label = `burst ${size}`;
  e.ctx.log(`${label}: ${size} PRs across ${Math.ceil(size / 10)} repositories`);
  const [auditMark, ghMark] = [e.env.cluster.audit.mark(), e.env.gh.mark()];
  const peakReset = await resetPeakRss(e.operator.pid);
  const usage0 = await processUsage(e.operator.pid);
  const started = performance.now();
  await Promise.all(
    planned.map(
      (p, i) =>
        new Promise<void>((resolve, reject) => {
          setTimeout(() => e.observer.send(p.t, p.delivery).then(resolve, reject), i * 10);
        }),
    ),
  );
  const timeoutMs = 120_000 + size * 1000;
  const all = (stage: keyof Timeline) => () => timelines.every((t) => t[stage] !== undefined);
  const applied = await e.observer.waitFor(`${label} applied`, timeoutMs, all('applied'));
  const ready = applied && (await e.observer.waitFor(`${label} Ready`, timeoutMs, all('ready')));
  const commented = ready && (await e.observer.waitFor(`${label} comments`, 120_000, all('commented')));
  const usage1 = await processUsage(e.operator.pid);
  await e.env.cluster.audit.settle();
  // When the last one got there (NaN if one did not).
  const last = (stage: 'applied' | 'ready' | 'commented') => Math.max(...timelines.map((t) => t[stage] ?? NaN)) - started;
  const cost: CostWindow = {
    environments: size,
    writes: e.env.cluster.audit.writes(auditMark, { userAgent: 'preview-operator' }),
    githubRequests: e.env.gh.requestsSince(ghMark),
    cpuSeconds: usage1.cpuSeconds - usage0.cpuSeconds,
  };
  const [allApplied, bare] = [last('applied'), bareMs === undefined ? [] : [bareMs]];
  const f = (name: string, value: number, unit: Figure['unit'], target?: Target) => figure(4, `${label}: ${name}`, value, unit, target);
  const figures: Figure[] = [
    f('all applied', allApplied / 1000, 's'),
    ...bare.map((ms) => f('bare burst of the same objects, same concurrency', ms / 1000, 's')),
    ...bare.map((ms) => f('all applied ÷ bare burst', ratio(allApplied, ms), 'ratio', atMost(1.3, '≤ 1.3×'))),
    f('all Ready', last('ready') / 1000, 's'),
    f('all comments say ready', last('commented') / 1000, 's'),
    f('delivery → applied, p95', summarize(span(timelines, 'sent', 'applied')).p95, 'ms'),
    ...costFigures(4, label, cost),
    f(`operator peak RSS${peakReset ? '' : ' (process lifetime)'}`, usage1.peakRssMb, 'MB', size <= 200 ? atMost(150) : undefined),
  ];
  const missing = (['applied', 'ready', 'commented'] as const).map((s) => `${timelines.filter((t) => t[s] === undefined).length} not ${s}`);
  const notes = [
    `${label}: deliveries 10 ms apart; operator CPU ${cost.cpuSeconds.toFixed(2)} s from the first delivery to the last comment.`,
    ...(commented ? [] : [`${label} did not converge: ${missing.join(', ')} at the deadline; figures cover what got there.`]),
    ...costNotes(label, cost),
  ];
  return { timelines, cost, figures, notes };
}
