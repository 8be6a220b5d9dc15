// Scenarios 2, 3 and 9, one PR at a time end to end: a PR opened on a real git repository, its signed delivery sent to the
// operator, the next PR once the comment says ready. 2 starts with unmeasured rounds (the first reconcile pays for discovery,
// V8 compiles the hot paths); 3 applies the same manifests by the bare loop (bare-apply.ts) after each; 9 runs with TLS on.
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '../src/kube/kube-object.js';
import { atMost, figure, type ScenarioResult } from './figures.js';
import { bareBurst } from './bare-apply.js';
import { span, type Timeline } from './observer.js';
import type { EndToEnd } from './scenario-end-to-end.js';
import { ratio, summarize } from './stats.js';

/** `warmups` then `runs` PRs, each once the previous one's comment and status said Ready, each followed by `after`; the measured ones. */
async function oneAfterAnother(e: EndToEnd, runs: number, warmups: number, after?: (measured: boolean) => Promise<void>) {
  const measured: Timeline[] = [];
  let ghMark = e.env.gh.mark();
  for (let i = 0; i < runs + warmups; i++, ghMark = i === warmups ? e.env.gh.mark() : ghMark) {
    const { delivery, pullRequest } = await e.single.open({ files: { 'CHANGE.md': `${i}\n` }, authorAssociation: 'MEMBER' });
    const t: Timeline = { repo: e.single, number: pullRequest.number };
    await e.observer.send(t, delivery);
    if (!(await e.observer.waitFor(`${t.environment} Ready`, 120_000, () => t.commented !== undefined && t.ready !== undefined))) {
      throw new Error(`${t.environment} was not Ready within 120 s`);
    }
    if (i >= warmups) measured.push(t);
    await after?.(i >= warmups);
  }
  return Object.assign(measured, { githubRequests: e.env.gh.requestsSince(ghMark).length });
}

const stages: Array<[string, keyof Timeline]> = [
  ['answered', 'answered'],
  ['PreviewEnvironment written', 'written'],
  ['applied', 'applied'],
  ['comment says ready', 'commented'],
  ['status Ready', 'ready'],
];

export async function onePullRequest(e: EndToEnd, runs: number, warmups: number): Promise<ScenarioResult[]> {
  const bareMs: number[] = [];
  const withBare = e.ctx.scenarios.includes(3);
  const singles = await oneAfterAnother(e, runs, warmups, async (measured) => {
    if (!withBare) return;
    const bare = await bareBurst(e.bare, 1, 1);
    if (measured) bareMs.push(bare.ms);
    e.bareNamespaces.push(...bare.namespaces);
  });
  const median = (to: keyof Timeline) => summarize(span(singles, 'sent', to)).p50;
  const figures = stages.map(([name, to]) => figure(2, `delivery → ${name}, median`, median(to), 'ms'));
  const readyP95 = summarize(span(singles, 'sent', 'ready')).p95;
  figures.push(figure(2, 'delivery → status Ready, p95', readyP95, 'ms', atMost(5000, 'p95 ≤ 5 s')));
  const requests = singles.githubRequests / singles.length; // each Ready well within the first comment's 5 s wait
  figures.push(figure(2, 'GitHub requests per environment Ready within the first comment’s wait', requests, 'count', atMost(7)));
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

/** Whether the Secret of the environment's Certificate holds a certificate for its URL's host and no other name. */
async function forExactlyTheHost({ env: { admin } }: EndToEnd, namespace: string): Promise<boolean> {
  type Read = KubeObject & { spec: { secretName: string }; status?: { url?: string }; data?: Record<string, string> };
  const environment = await admin.get<Read>({ apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment', name: namespace });
  const [certificate] = (await admin.list<Read>({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate' }, { namespace })).items;
  const secret = await admin.get<Read>({ apiVersion: 'v1', kind: 'Secret', namespace, name: certificate!.spec.secretName });
  const leaf = new X509Certificate(Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64'));
  return leaf.subjectAltName === `DNS:${new URL(environment.status!.url!).hostname}`;
}

/** Scenario 9: per PR, applied → its Certificate Ready (the condition cert-manager sets), → status Ready and the https:// URL commented. */
export async function tlsPullRequests(e: EndToEnd, runs: number): Promise<ScenarioResult[]> {
  const list = await oneAfterAnother(e, runs, 0);
  const spans: Array<[string, keyof Timeline, keyof Timeline]> = [
    ['delivery → applied', 'sent', 'applied'],
    ['applied → Certificate Ready', 'applied', 'certified'],
    ['applied → status Ready', 'applied', 'ready'],
    ['applied → comment says https:// URL ready', 'applied', 'commented'],
  ];
  const figures = spans.flatMap(([name, from, to]) => {
    const { p50, max } = summarize(span(list, from, to));
    return [figure(9, `${name}, median`, p50, 'ms'), figure(9, `${name}, max`, max, 'ms')];
  });
  const exact = await Promise.all(list.map((t) => forExactlyTheHost(e, t.environment!).catch((err: Error) => e.ctx.log(err.message))));
  figures.push(figure(9, `certificates issued for exactly the preview host, of ${list.length}`, exact.filter(Boolean).length, 'count'));
  const note = `${list.length} PRs one after another, no warm-up; a Certificate each (--tls-mode=per-preview) from the test CA ClusterIssuer.`;
  return [{ scenario: 9, title: 'TLS with cert-manager', figures, notes: [note] }];
}
