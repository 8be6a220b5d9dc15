// Scenarios 2 and 3, one PR end to end: a PR opened on a real git repository, its signed delivery
// sent to the operator, the next PR once the comment says ready; alternately, the same manifests
// applied by the bare loop (bare-apply.ts). Both start with unmeasured warm-up rounds: the first
// reconcile pays for discovery, and V8 compiles the hot paths over the first dozen runs.
import { atMost, figure, type ScenarioResult } from './figures.js';
import { bareBurst } from './bare-apply.js';
import { span, type Timeline } from './observer.js';
import type { EndToEnd } from './scenario-end-to-end.js';
import { ratio, summarize } from './stats.js';

const stages: Array<[string, keyof Timeline]> = [
  ['answered', 'answered'],
  ['PreviewEnvironment written', 'written'],
  ['applied', 'applied'],
  ['comment says ready', 'commented'],
  ['status Ready', 'ready'],
];

export async function onePullRequest(e: EndToEnd, runs: number, warmups: number): Promise<ScenarioResult[]> {
  const [singles, bareMs]: [Timeline[], number[]] = [[], []];
  const withBare = e.ctx.scenarios.includes(3);
  for (let i = 0; i < runs + warmups; i++) {
    const { delivery, pullRequest } = await e.single.open({ files: { 'CHANGE.md': `${i}\n` }, authorAssociation: 'MEMBER' });
    const t: Timeline = { repo: e.single, number: pullRequest.number };
    await e.observer.send(t, delivery);
    if (!(await e.observer.waitFor(`${t.environment} Ready`, 120_000, () => t.commented !== undefined && t.ready !== undefined))) {
      throw new Error(`${t.environment} was not Ready within 120 s`);
    }
    if (i >= warmups) singles.push(t);
    if (!withBare) continue;
    const bare = await bareBurst(e.bare, 1, 1);
    if (i >= warmups) bareMs.push(bare.ms);
    e.bareNamespaces.push(...bare.namespaces);
  }
  const median = (to: keyof Timeline) => summarize(span(singles, 'sent', to)).p50;
  const figures = stages.map(([name, to]) => figure(2, `delivery → ${name}, median`, median(to), 'ms'));
  const readyP95 = summarize(span(singles, 'sent', 'ready')).p95;
  figures.push(figure(2, 'delivery → status Ready, p95', readyP95, 'ms', atMost(5000, 'p95 ≤ 5 s')));
  const note = `${singles.length} PRs one after another (each once the previous one was Ready), after ${warmups} unmeasured.`;
  if (!withBare) return [{ scenario: 2, title: 'One PR, end to end', figures, notes: [note] }];
  const bare = summarize(bareMs).p50;
  const applied = ratio(median('applied'), bare);
  figures.push(figure(2, 'delivery → applied ÷ bare apply (medians)', applied, 'ratio', atMost(1.5, '≤ 1.5×')));
  return [
    { scenario: 2, title: 'One PR, end to end', figures, notes: [note, 'Each followed by a bare apply.'] },
    { scenario: 3, title: 'The limit: bare apply', figures: [figure(3, 'bare apply of one environment, median', bare, 'ms')], notes: [] },
  ];
}
