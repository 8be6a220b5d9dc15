// `preview-operator run` as a process against the real control plane: bad settings stop it
// before anything starts (exit 2); two replicas elect one leader while both answer webhooks;
// killing the leader hands over once its lease expires (within 25 s); a leader whose lease is stolen stops
// leading but keeps answering webhooks, and leads again once the lease is free;
// SIGTERM drains, releases the lease and exits 0.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { KubeRequestError, kubeRequest } from '../fixtures/crds/kube-apply.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { metricValue, ping, spawnOperator, waitStarted, type OperatorProcess } from '../fixtures/cli/operator-process.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

interface Lease {
  metadata: { resourceVersion: string };
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number; renewTime?: string };
}

const cluster = await testCluster();
const gh = await startTestEmulator();
const namespace = uniqueName('cli-run');
const secret = randomBytes(16).toString('hex');
let dir: string;
let env: Record<string, string>;
const running: OperatorProcess[] = [];

before(async () => {
  await installCrds(cluster.kubeConfig);
  await createNamespace(cluster.kubeConfig, namespace);
  const app = gh.createApp();
  dir = await mkdtemp(path.join(os.tmpdir(), 'cli-run-'));
  await writeFile(path.join(dir, 'key.pem'), app.privateKey);
  await writeFile(path.join(dir, 'secret'), `${secret}\n`);
  env = {
    KUBECONFIG: cluster.kubeconfigPath,
    // The webhook and the resync only: the Algorithm and Database controllers would also
    // reconcile other test files' objects in this shared cluster.
    PREVIEW_OPERATOR_CONTROLLERS: 'webhook,resync',
    PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE: namespace,
    PREVIEW_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
    PREVIEW_OPERATOR_WEBHOOK_PORT: '0',
    PREVIEW_OPERATOR_METRICS_PORT: '0',
    PREVIEW_OPERATOR_WEBHOOK_SECRET_FILE: path.join(dir, 'secret'),
    PREVIEW_OPERATOR_GITHUB_API_URL: gh.url,
    PREVIEW_OPERATOR_GITHUB_APP_ID: String(app.id),
    PREVIEW_OPERATOR_GITHUB_APP_PRIVATE_KEY_FILE: path.join(dir, 'key.pem'),
    PREVIEW_OPERATOR_CHECKOUT_CACHE_DIR: path.join(dir, 'checkouts'),
  };
});

after(async () => {
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
  await kubeRequest(cluster.kubeConfig, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
});

function start(identity: string, lease: string, extra: string[] = []): OperatorProcess {
  const p = spawnOperator(['run', `--leader-election-identity=${identity}`, `--leader-election-lease=${lease}`, ...extra], env);
  running.push(p);
  return p;
}

async function lease(name: string): Promise<Lease | undefined> {
  try {
    return (await kubeRequest(cluster.kubeConfig, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`)) as Lease;
  } catch (err) {
    if (err instanceof KubeRequestError && err.statusCode === 404) return undefined;
    throw err;
  }
}

test('bad settings: every one named, exit code 2, nothing started', async () => {
  const p = start('bad', 'bad-lease', ['--webhook-port=http', '--resync-interval=soon', '--github-api-url=ftp://x']);
  assert.equal(await p.exited, 2);
  const stderr = p.stderr();
  assert.match(stderr, /invalid configuration \(3 problems\); nothing was started/);
  assert.match(stderr, /--webhook-port .*--webhook-port=http: must be a whole number/);
  assert.match(stderr, /--resync-interval .*--resync-interval=soon: must be a duration/);
  assert.match(stderr, /--github-api-url .*must be an http\(s\) URL/);
  assert.equal(await lease('bad-lease'), undefined, 'no Lease was taken');
});

test('two replicas: one leader, both answer webhooks; the leader killed, the other leads once the lease expires (within 25 s); SIGTERM releases the lease', async () => {
  const a = start('replica-a', 'ha');
  await waitStarted(a);
  await waitFor('replica-a to lead', async () => (await lease('ha'))?.spec?.holderIdentity === 'replica-a', { timeoutMs: 30_000 });
  const b = start('replica-b', 'ha');
  await waitStarted(b);
  for (const p of [a, b]) {
    await waitFor('/readyz 200', async () => (await fetch(`${p.baseUrl()}/readyz`)).status === 200, { timeoutMs: 30_000 });
    const answer = await ping(p.webhookUrl(), secret);
    assert.deepEqual([answer.status, answer.body.result], [200, 'pong']);
    // Every replica serves the dashboard, from its own informer cache.
    assert.match(await (await fetch(p.dashboardUrl())).text(), /<h1>Preview environments/);
  }
  assert.equal(await metricValue(a.metricsUrl(), 'preview_operator_leader'), 1);
  assert.equal(await metricValue(b.metricsUrl(), 'preview_operator_leader'), 0);

  const killedAt = Date.now();
  a.child.kill('SIGKILL');
  await waitFor(
    'replica-b to lead',
    async () => {
      // Webhooks stay answered throughout the hand-over.
      assert.equal((await ping(b.webhookUrl(), secret)).status, 200);
      return (await metricValue(b.metricsUrl(), 'preview_operator_leader')) === 1;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  const handOverMs = Date.now() - killedAt;
  // The lease's 15 s from the last renewal, then the next try (every 2 s) on a possibly busy API server.
  assert.ok(handOverMs < 25_000, `hand-over took ${handOverMs} ms`);
  assert.equal((await lease('ha'))?.spec?.holderIdentity, 'replica-b');

  // A dashboard left open in a browser (its live stream) does not hold the shutdown up.
  const stream = await fetch(`${b.dashboardUrl()}events`);
  assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  b.child.kill('SIGTERM');
  assert.equal(await b.exited, 0);
  await stream.body?.cancel().catch(() => {});
  const released = await lease('ha');
  assert.ok(!released?.spec?.holderIdentity, `the lease was released (holder: ${released?.spec?.holderIdentity})`);
  assert.ok(b.lines.some((l) => l.msg === 'operator stopped'));
  process.stderr.write(`# leader hand-over after SIGKILL: ${handOverMs} ms\n`);
});

/** This machine's first non-loopback IPv4 address: how another pod of the cluster would reach the operator's. */
function podAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a?.family === 'IPv4' && !a.internal)?.address;
}

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

test('the dashboard (no login) is reached from loopback names only; the webhook, on 0.0.0.0, from the pod address', async (t) => {
  const address = podAddress();
  if (!address) return t.skip('no non-loopback IPv4 address on this machine');
  const p = start('replica-d', 'dashboard-bind', ['--webhook-host=0.0.0.0']);
  await waitStarted(p);
  const dashboard = new URL(p.dashboardUrl());
  const webhook = new URL(p.webhookUrl());
  assert.equal(await accepts(address, Number(webhook.port)), true, `the webhook answers on ${address}`);
  assert.equal(await accepts(address, Number(dashboard.port)), false, `the dashboard is refused on ${address}`);
  assert.match(await (await fetch(`http://127.0.0.1:${dashboard.port}/`)).text(), /<h1>Preview environments/);
  // A page elsewhere that rebinds a name of its own to 127.0.0.1 reaches the port, with its name in Host.
  const rebound = await new Promise<number>((resolve, reject) => {
    const headers = { host: `rebind.attacker.example:${dashboard.port}` };
    request(`http://127.0.0.1:${dashboard.port}/`, { headers }, (res) => (res.resume(), resolve(res.statusCode ?? 0)))
      .on('error', reject)
      .end();
  });
  assert.equal(rebound, 421);
  p.child.kill('SIGTERM');
  assert.equal(await p.exited, 0);
});

test('a leader whose lease is taken away stops leading, keeps answering webhooks, and leads again once the lease is free', async () => {
  const p = start('replica-c', 'stolen', [
    '--leader-election-lease-duration=4s',
    '--leader-election-renew-deadline=3s',
    '--leader-election-retry-period=500ms',
  ]);
  await waitStarted(p);
  await waitFor('replica-c to lead', async () => (await lease('stolen'))?.spec?.holderIdentity === 'replica-c', { timeoutMs: 30_000 });
  const current = (await lease('stolen'))!;
  await kubeRequest(cluster.kubeConfig, 'PUT', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/stolen`, {
    ...current,
    spec: {
      ...current.spec,
      holderIdentity: 'intruder',
      leaseDurationSeconds: 8,
      renewTime: new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z'),
    },
  });
  await waitFor('replica-c to stop leading', async () => (await metricValue(p.metricsUrl(), 'preview_operator_leader')) === 0, {
    timeoutMs: 30_000,
  });
  // The log says why. Its lines are written asynchronously: the metric may answer first.
  await waitFor('the log to say why', () => p.lines.some((l) => /lost the lease/.test(String(l.msg))), { timeoutMs: 10_000 });
  assert.equal(p.child.exitCode, null, 'the process goes on');
  assert.deepEqual([(await ping(p.webhookUrl(), secret)).status, (await fetch(`${p.baseUrl()}/readyz`)).status], [200, 200]);
  // The intruder never renews: its 8 s pass, and replica-c takes the lease again.
  await waitFor('replica-c to lead again', async () => (await metricValue(p.metricsUrl(), 'preview_operator_leader')) === 1, {
    timeoutMs: 30_000,
  });
  assert.equal((await lease('stolen'))?.spec?.holderIdentity, 'replica-c');
  p.child.kill('SIGTERM');
  assert.equal(await p.exited, 0);
});
