import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from 'express';
import { ApprovalRevoker } from '../github/reporting/approval-revoker.js';
import { EnvironmentWriter } from '../intake/environment-writer.js';
import { WebhookReceiver } from '../intake/webhook-receiver.js';
import { resolvePolicyConfig } from '../policy/policy-validation.js';
import { silentLogger } from '../kube/logger.js';
import { createServer } from './create-server.js';
import { startServer } from './start-server.js';

const noWrites = new EnvironmentWriter({
  store: {
    upsert: async () => {
      throw new Error('not expected');
    },
    delete: async () => {
      throw new Error('not expected');
    },
  },
});

test('GET /healthz answers 200 ok; an unhealthy check answers 503', async (t) => {
  const healthy = await startServer(createServer());
  t.after(() => healthy.close());
  const res = await fetch(`${healthy.url}/healthz`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
  assert.equal(res.headers.get('x-powered-by'), null);

  let alive = false;
  const sick = await startServer(createServer({ health: async () => alive }));
  t.after(() => sick.close());
  assert.equal((await fetch(`${sick.url}/healthz`)).status, 503);
  alive = true;
  assert.equal((await fetch(`${sick.url}/healthz`)).status, 200);
});

test('extra routers are mounted (how /readyz and /metrics get added)', async (t) => {
  const ready = Router().get('/readyz', (_req, res) => {
    res.send('ready');
  });
  const metrics = Router().get('/metrics', (_req, res) => {
    res.type('text/plain').send('up 1\n');
  });
  const running = await startServer(createServer({ routers: [ready, metrics] }));
  t.after(() => running.close());
  assert.equal(await (await fetch(`${running.url}/readyz`)).text(), 'ready');
  assert.equal(await (await fetch(`${running.url}/metrics`)).text(), 'up 1\n');
  assert.equal((await fetch(`${running.url}/nothing-here`)).status, 404);
});

test('the webhook path takes POST only; without a receiver it does not exist', async (t) => {
  const approvals = new ApprovalRevoker({ removeLabel: async () => {} });
  const receiver = new WebhookReceiver({ secret: 'x', writer: noWrites, approvals, policy: resolvePolicyConfig() });
  const running = await startServer(createServer({ webhook: receiver }));
  t.after(() => running.close());
  const get = await fetch(`${running.url}/api/github/webhooks`);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  const bare = await startServer(createServer());
  t.after(() => bare.close());
  assert.equal((await fetch(`${bare.url}/api/github/webhooks`, { method: 'POST', body: '{}' })).status, 404);
});

test('every spelling of the webhook path gets the same answer, served as JSON', async (t) => {
  const approvals = new ApprovalRevoker({ removeLabel: async () => {} });
  const receiver = new WebhookReceiver({ secret: 'x', writer: noWrites, approvals, policy: resolvePolicyConfig() });
  const running = await startServer(createServer({ webhook: receiver }));
  t.after(() => running.close());
  // The exact path (and with a query) is answered without Express; other spellings through it.
  for (const path of ['/api/github/webhooks', '/api/github/webhooks?source=github', '/api/github/webhooks/', '/API/github/webhooks']) {
    const res = await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(res.status, 401, path);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8', path);
    assert.deepEqual(await res.json(), { result: 'unauthorized', reason: 'missing or invalid X-Hub-Signature-256' }, path);
  }
});

test('a webhook receiver that throws is answered 500 and logged, and the server goes on', async (t) => {
  const logged: unknown[] = [];
  const logger = {
    ...silentLogger,
    error: (fields: unknown) => {
      logged.push(fields);
    },
  };
  const broken = {
    handle: async () => {
      throw new Error('boom');
    },
  } as unknown as WebhookReceiver;
  const running = await startServer(createServer({ webhook: broken, logger }));
  t.after(() => running.close());
  for (const path of ['/api/github/webhooks', '/api/github/webhooks/']) {
    const res = await fetch(`${running.url}${path}`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 500, path);
    assert.deepEqual(await res.json(), { error: 'internal error' });
  }
  assert.equal(logged.length, 2);
  assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
});

test('startServer listens on 127.0.0.1 with a free port and closes cleanly', async () => {
  const running = await startServer(createServer());
  assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(running.port > 0);
  await running.close();
  await assert.rejects(fetch(`${running.url}/healthz`));
});
