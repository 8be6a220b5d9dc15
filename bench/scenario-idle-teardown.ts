// Scenario 5, idle: after a burst, every environment Ready and left alone — the operator writes
// nothing and asks GitHub for nothing new (the resync's conditional requests answer 304).
// Scenario 8, teardown: a burst's PRs closed at once until every namespace is gone; no write of
// the operator may be refused by a namespace being terminated. Its CPU counts to 3 s after.
import { verbResource } from './environment-cost.js';
import { atMost, figure, type Measured } from './figures.js';
import { post, type Timeline } from './observer.js';
import { resyncIntervalMs } from './operator-process.js';
import { processUsage } from './process-usage.js';
import type { EndToEnd } from './scenario-end-to-end.js';
import { countBy, timed } from './stats.js';

/** Waits one resync pass (it lists the PRs as they now stand; the last one saw a burst half-way); the RSS then, MB. */
export async function settle(e: EndToEnd): Promise<number> {
  const settled = performance.now() + resyncIntervalMs + 5000;
  await e.observer.waitFor('a resync pass', resyncIntervalMs + 10_000, () => performance.now() >= settled);
  return (await processUsage(e.operator.pid)).rssMb;
}

/** After `settle`: `ms` alone. */
export async function idle(e: EndToEnd, ms: number, standing: number): Promise<Measured> {
  const [auditMark, ghMark, u0, t0] = [e.env.cluster.audit.mark(), e.env.gh.mark(), await processUsage(e.operator.pid), performance.now()];
  await e.observer.waitFor('the idle period', ms + 5000, () => performance.now() - t0 >= ms);
  const minutes = (performance.now() - t0) / 60_000;
  const u1 = await processUsage(e.operator.pid);
  await e.env.cluster.audit.settle();
  const writes = e.env.cluster.audit.writes(auditMark, { userAgent: 'preview-operator' });
  const requests = e.env.gh.requestsSince(ghMark);
  const non304 = requests.filter((r) => r.status !== 304).length;
  return {
    figures: [
      figure(5, `idle, ${standing} standing: API writes per minute`, writes.length / minutes, '/min', atMost(0)),
      figure(5, 'idle: non-304 GitHub requests per minute', non304 / minutes, '/min', atMost(0)),
      figure(5, 'idle: operator CPU seconds per minute', (u1.cpuSeconds - u0.cpuSeconds) / minutes, 's'),
      figure(5, 'idle: operator RSS at the end', u1.rssMb, 'MB'),
    ],
    notes: [
      `${standing} Ready environments left alone for ${(minutes * 60).toFixed(0)} s (resync every ${resyncIntervalMs / 1000} s).`,
      ...(writes.length ? [`Writes: ${countBy(writes, verbResource)}.`] : []),
      ...(requests.length ? [`GitHub: ${countBy(requests, (r) => `${r.method} ${r.operationId ?? r.path} ${r.status}`)}.`] : []),
    ],
  };
}

export async function teardown(e: EndToEnd, label: string, timelines: readonly Timeline[]): Promise<Measured> {
  const closes = await Promise.all(timelines.map(async (t) => (await t.repo.close(t.number)).delivery));
  const [mark, started, u0] = [e.env.cluster.audit.mark(), performance.now(), await processUsage(e.operator.pid)];
  await timed(closes, 20, async (delivery) => {
    const answer = await post(e.operator.webhookUrl, delivery);
    if (answer.status >= 300) throw new Error(`a close answered ${answer.status}: ${answer.body}`);
  });
  const gone = await e.observer.waitFor(`${label} gone`, 300_000 + timelines.length * 1000, () => timelines.every((t) => t.namespaceGone));
  const goneMs = gone ? Math.max(...timelines.map((t) => t.namespaceGone!)) - started : NaN;
  await new Promise((r) => setTimeout(r, 3000)); // late writes into the namespaces just gone count too
  const [u1] = await Promise.all([processUsage(e.operator.pid), e.env.cluster.audit.settle()]);
  const writes = e.env.cluster.audit.writes(mark, { userAgent: 'preview-operator' });
  const refused = writes.filter((w) => w.responseStatus?.code === 403 || w.responseStatus?.code === 409);
  const byCode = countBy(refused, (w) => `${w.responseStatus?.code} ${verbResource(w)}`);
  return {
    figures: [
      figure(8, `teardown of ${label}: all namespaces gone (from the first close)`, goneMs / 1000, 's'),
      figure(8, `teardown of ${label}: operator writes refused (403/409)`, refused.length, 'count', atMost(0)),
      figure(8, `teardown of ${label}: operator API writes per environment`, writes.length / timelines.length, 'count'),
      figure(8, `teardown of ${label}: operator CPU per environment`, (1000 * (u1.cpuSeconds - u0.cpuSeconds)) / timelines.length, 'ms'),
    ],
    notes: [
      `Teardown of ${label}: ${timelines.length} pull_request.closed deliveries, 20 at a time; gone = the Namespace's DELETED event.`,
      `Its writes: ${countBy(writes, verbResource)}.${refused.length ? ` Refused: ${byCode}.` : ''}`,
    ],
  };
}
