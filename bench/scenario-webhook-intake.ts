// Scenario 1, webhook intake: N signed `pull_request.opened` deliveries (distinct PRs: each a real
// PreviewEnvironment write), C at a time, to the operator running the webhook alone, after an
// unmeasured warm-up: the answer time, then until every write has landed (audit log). Beside it, as
// many bare PreviewEnvironment applies at the same concurrency: the API server's share.
import { randomBytes } from 'node:crypto';
import { environmentObject } from '../src/intake/environment-store.js';
import { PullRequestDriver } from '../test/github-emulator/pull-requests.js';
import type { WebhookDelivery } from '../test/github-emulator/webhook-delivery.js';
import type { BenchEnvironment } from './bench-environment.js';
import { benchSpec } from './bench-preview.js';
import { atMost, figure, type Measured } from './figures.js';
import { post } from './observer.js';
import { startOperatorProcess } from './operator-process.js';
import { processUsage } from './process-usage.js';
import { ratio, summarize, timed } from './stats.js';

/** Waits until the operator's PreviewEnvironment writes since `mark` number `count`; how many were refused. */
async function written(env: BenchEnvironment, mark: number, count: number): Promise<number> {
  for (const deadline = Date.now() + 300_000; ; await env.cluster.audit.settle(100)) {
    const writes = env.cluster.audit.writes(mark, { userAgent: 'preview-operator', resource: 'previewenvironments' });
    const done = writes.filter((w) => (w.responseStatus?.code ?? 0) < 300).length;
    if (done >= count || Date.now() > deadline) return writes.length - done;
  }
}

type Options = { deliveries: number; concurrency: number; warmup: number; outDir: string };

export async function webhookIntake(env: BenchEnvironment, options: Options): Promise<Measured> {
  const { gh, cluster } = env;
  const secret = randomBytes(20).toString('hex');
  const owner = `intake-${randomBytes(3).toString('hex')}`;
  const driver = await PullRequestDriver.create(gh, { owner, name: 'service', webhookSecret: secret });
  const base = { sha: gh.repository(driver.repository).branches.get('main')! };
  const deliveries = Array.from({ length: options.warmup + options.deliveries }, (_, i) => {
    const head = { ref: `f-${i}`, sha: i.toString(16).padStart(40, 'c') };
    gh.openPullRequest(driver.repository, { number: i + 1, author: 'alice', authorAssociation: 'MEMBER', head, base });
    return driver.delivery('opened', i + 1, 'alice');
  });
  const operator = await startOperatorProcess(env, { secret, outDir: options.outDir, controllers: 'webhook' });
  try {
    let failed = 0;
    const send = (d: WebhookDelivery) => post(operator.webhookUrl, d).then((a) => void (failed += a.status >= 300 ? 1 : 0));
    await timed(deliveries.slice(0, options.warmup), options.concurrency, send);
    await written(env, 0, options.warmup);
    const [mark, usage0, started] = [cluster.audit.mark(), await processUsage(operator.pid), performance.now()];
    const answers = summarize(await timed(deliveries.slice(options.warmup), options.concurrency, send));
    const answeredMs = performance.now() - started;
    const refused = await written(env, mark, options.deliveries);
    const recordedMs = performance.now() - started;
    const cpuMs = 1000 * ((await processUsage(operator.pid)).cpuSeconds - usage0.cpuSeconds);
    const spec = (n: number) => benchSpec(owner, 'bare', n + 1, 'd'.repeat(40), 'https://github.com/o/r.git');
    const environments = deliveries.map((_, n) => environmentObject(`pr-${n}-bare-${owner}`, spec(n)));
    await env.admin.apply(environments.pop()!); // the connection, outside the measurement
    const bare = summarize(await timed(environments.slice(0, options.deliveries), options.concurrency, (o) => env.admin.apply(o)));
    return {
      figures: [
        figure(1, 'webhook answer p50', answers.p50, 'ms'),
        figure(1, 'webhook answer p99', answers.p99, 'ms', atMost(20, 'p99 ≤ 20 ms')),
        figure(1, `all ${options.deliveries} answered`, answeredMs / 1000, 's'),
        figure(1, `all ${options.deliveries} recorded in the cluster`, recordedMs / 1000, 's'),
        figure(1, 'operator CPU per delivery (answer + write)', cpuMs / options.deliveries, 'ms'),
        figure(1, 'bare PreviewEnvironment apply p99 (same concurrency)', bare.p99, 'ms'),
        figure(1, 'webhook answer ÷ bare apply (p99)', ratio(answers.p99, bare.p99), 'ratio'),
        figure(1, 'non-2xx answers and refused writes', failed + refused, 'count', atMost(0)),
      ],
      notes: [`${options.deliveries} deliveries, ${options.concurrency} at a time, kept-alive, after ${options.warmup} unmeasured.`],
    };
  } finally {
    await operator.stop();
    await env.admin.request({ method: 'DELETE', path: '/apis/preview.alien6.io/v1alpha1/previewenvironments' }).catch(() => {});
    await driver.cleanup();
  }
}
