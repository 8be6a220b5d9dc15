import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { ApprovalRevoker } from '../github/reporting/approval-revoker.js';
import { EnvironmentWriter } from '../intake/environment-writer.js';
import { WebhookReceiver } from '../intake/webhook-receiver.js';
import { resolvePolicyConfig } from '../policy/policy-validation.js';
import { RateLimitObserver } from '../github/octokit-rate-limit.js';
import { createServer } from './create-server.js';
import { metricsRouter } from './metrics-router.js';
import { OperatorMetrics } from './metrics.js';
import { startServer } from './start-server.js';

const line = (text: string, prefix: string) => text.split('\n').find((l) => l.startsWith(prefix));

test('controller, webhook, GitHub and environment metrics appear in the exposition', async () => {
  const metrics = new OperatorMetrics({ processMetrics: false });
  metrics.reconcileFinished('algorithm', 'success', 120);
  metrics.reconcileFinished('algorithm', 'error', 30);
  metrics.retried('algorithm');
  metrics.queueDepth('algorithm', 4);
  metrics.webhookDelivery({ status: 202, result: 'accepted', event: 'pull_request', durationMs: 3 });
  metrics.webhookDelivery({ status: 401, result: 'unauthorized', durationMs: 1 });
  metrics.webhookWrite({ source: 'webhook', environment: 'pr-1-shop-abc', op: 'upsert', result: 'upserted', attempts: 1, durationMs: 40 });
  metrics.webhookWrite({ source: 'webhook', environment: 'pr-1-shop-abc', op: 'upsert', result: 'upserted', attempts: 3, durationMs: 700 });
  metrics.webhookWrite({ source: 'webhook', environment: 'pr-2-shop-def', op: 'delete', result: 'absent', attempts: 1, durationMs: 20 });
  metrics.webhookWrite({ source: 'webhook', environment: 'pr-3-shop-123', op: 'upsert', result: 'failed', attempts: 1, durationMs: 15 });
  // The resync's writes share the writer, not the webhook's series.
  metrics.webhookWrite({ source: 'resync', environment: 'pr-4-shop-456', op: 'upsert', result: 'upserted', attempts: 1, durationMs: 9 });
  let pendingWrites = 7;
  metrics.trackWebhookWrites(() => pendingWrites);
  metrics.observeWebhookToApplied(4.2);
  metrics.observeWebhookToReady(33);
  const observer = new RateLimitObserver();
  metrics.trackGitHub(observer);
  observer.record('token', {
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4990',
    'x-ratelimit-reset': '1800000000',
    'x-ratelimit-resource': 'core',
  });
  observer.record('token', {
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': '4989',
    'x-ratelimit-reset': '1800000000',
    'x-ratelimit-resource': 'core',
  });
  const created = new Date(Date.now() - 3_600_000).toISOString();
  metrics.trackEnvironments(() => [
    {
      apiVersion: 'preview.alien6.io/v1alpha1',
      kind: 'PreviewEnvironment',
      metadata: { name: 'pr-1-shop-abc', creationTimestamp: created },
      status: { phase: 'Ready' },
    } as never,
    {
      apiVersion: 'preview.alien6.io/v1alpha1',
      kind: 'PreviewEnvironment',
      metadata: { name: 'pr-2-shop-def', creationTimestamp: created },
    },
  ]);

  metrics.resyncPass({ created: ['a'], updated: [], deleted: ['b', 'c'], deletionCapReached: true, errors: [], durationMs: 1500 } as never);
  metrics.leadershipChanged(true);

  const text = await metrics.metrics();
  assert.ok(line(text, 'preview_operator_resync_passes_total{result="capped"} 1'));
  assert.ok(line(text, 'preview_operator_resync_changes_total{change="deleted"} 2'));
  assert.ok(line(text, 'preview_operator_resync_duration_seconds_count 1'));
  assert.ok(line(text, 'preview_operator_leader 1'));
  assert.equal(
    line(text, 'preview_operator_reconciles_total{controller="algorithm",outcome="success"}'),
    'preview_operator_reconciles_total{controller="algorithm",outcome="success"} 1',
  );
  assert.equal(
    line(text, 'preview_operator_reconcile_errors_total{controller="algorithm"}'),
    'preview_operator_reconcile_errors_total{controller="algorithm"} 1',
  );
  assert.equal(
    line(text, 'preview_operator_reconcile_duration_seconds_count{controller="algorithm"}'),
    'preview_operator_reconcile_duration_seconds_count{controller="algorithm"} 2',
  );
  assert.equal(
    line(text, 'preview_operator_queue_depth{controller="algorithm"}'),
    'preview_operator_queue_depth{controller="algorithm"} 4',
  );
  assert.ok(line(text, 'preview_operator_webhook_deliveries_total{event="pull_request",result="accepted",status="202"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_writes_total{op="upsert",result="upserted"} 2'));
  assert.ok(line(text, 'preview_operator_webhook_writes_total{op="delete",result="absent"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_writes_total{op="upsert",result="failed"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_write_seconds_count{op="upsert"} 2'), 'a refused write is counted, not timed');
  assert.ok(line(text, 'preview_operator_webhook_write_seconds_bucket{le="0.05",op="upsert"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_write_seconds_bucket{le="1",op="upsert"} 2'));
  assert.ok(line(text, 'preview_operator_webhook_writes_pending 7'));
  assert.ok(line(text, 'preview_operator_webhook_deliveries_total{event="unknown",result="unauthorized",status="401"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_to_applied_seconds_bucket{le="5"} 1'));
  assert.ok(line(text, 'preview_operator_webhook_to_ready_seconds_bucket{le="30"} 0'));
  assert.ok(line(text, 'preview_operator_webhook_to_ready_seconds_bucket{le="60"} 1'));
  assert.ok(line(text, 'preview_operator_github_requests_total{client="token",resource="core"} 2'));
  assert.ok(line(text, 'preview_operator_github_rate_limit_remaining{client="token",resource="core"} 4989'));
  assert.ok(line(text, 'preview_operator_environments{phase="Ready"} 1'));
  assert.ok(line(text, 'preview_operator_environments{phase="Pending"} 1'));
  assert.ok(line(text, 'preview_operator_environments{phase="Failed"} 0'));
  pendingWrites = 0;
  assert.ok(line(await metrics.metrics(), 'preview_operator_webhook_writes_pending 0'), 'read at each scrape');
  const age = Number(line(text, 'preview_operator_environment_age_seconds{environment="pr-1-shop-abc",phase="Ready"}')?.split(' ')[1]);
  assert.ok(age >= 3600 && age < 3700, `age ${age}`);
});

test('two instances do not share counters, and process metrics are on the instance registry', async () => {
  const a = new OperatorMetrics();
  const b = new OperatorMetrics();
  a.reconcileFinished('database', 'success', 1);
  assert.match(await a.metrics(), /preview_operator_reconciles_total\{controller="database",outcome="success"\} 1/);
  assert.doesNotMatch(await b.metrics(), /controller="database"/);
  assert.match(await b.metrics(), /^process_resident_memory_bytes /m);
});

test("the event loop's delay is measured, sampled every 100 ms", async () => {
  const metrics = new OperatorMetrics();
  // A loop blocked for 300 ms: the next sample is late by about that much.
  await new Promise((resolve) => setTimeout(resolve, 150));
  const blockedUntil = performance.now() + 300;
  while (performance.now() < blockedUntil);
  await new Promise((resolve) => setTimeout(resolve, 150));
  const max = Number(line(await metrics.metrics(), 'nodejs_eventloop_lag_max_seconds ')?.split(' ')[1]);
  assert.ok(max >= 0.2 && max < 1, `max delay ${max} s`);
});

test('GET /metrics serves the exposition through the server extension point', async () => {
  const metrics = new OperatorMetrics({ processMetrics: false });
  metrics.queueDepth('preview-environment', 2);
  const server = await startServer(createServer({ routers: [metricsRouter(metrics)] }));
  try {
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0.0.4/);
    assert.match(await res.text(), /preview_operator_queue_depth\{controller="preview-environment"\} 2/);
  } finally {
    await server.close();
  }
});

test('requests naming events of their choosing, signed or not, add no metric series', async () => {
  const metrics = new OperatorMetrics({ processMetrics: false });
  const store = { upsert: async () => {}, delete: async () => 'deleted' as const };
  const secret = 'webhook-secret';
  const webhook = new WebhookReceiver({
    secret,
    writer: new EnvironmentWriter({ store }),
    approvals: new ApprovalRevoker({ removeLabel: async () => {} }),
    policy: resolvePolicyConfig(),
    observe: metrics.webhookDelivery, // as src/cli-run-intake.ts wires it
  });
  const server = await startServer(createServer({ webhook, routers: [metricsRouter(metrics)] }));
  const send = async (event: string, signed: boolean) => {
    const body = '{"zen":"x"}';
    const signature = signed ? { 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` } : {};
    const res = await fetch(`${server.url}/api/github/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-github-delivery': randomUUID(), ...signature },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  };
  try {
    for (let i = 0; i < 40; i++) {
      // Unsigned: anyone who reaches the port. Signed: a captured body replayed with any event header (not signed).
      assert.equal(await send(`made-up-${i}-${'x'.repeat(2000)}`, false), 401);
      assert.equal(await send(`made_up_${i}`, true), 202);
      assert.equal(await send(`made-up-${i}-${'x'.repeat(2000)}`, true), 400);
    }
    assert.equal(await send('ping', true), 200);
    const series = (await metrics.metrics()).split('\n').filter((l) => l.startsWith('preview_operator_webhook_deliveries_total{'));
    assert.deepEqual(series.sort(), [
      'preview_operator_webhook_deliveries_total{event="other",result="bad-request",status="400"} 40',
      'preview_operator_webhook_deliveries_total{event="other",result="unauthorized",status="401"} 40',
      'preview_operator_webhook_deliveries_total{event="other",result="unused",status="202"} 40',
      'preview_operator_webhook_deliveries_total{event="ping",result="pong",status="200"} 1',
    ]);
  } finally {
    await server.close();
  }
});
