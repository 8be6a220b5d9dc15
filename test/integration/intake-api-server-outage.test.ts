// Intake does not depend on leadership: two `preview-operator run` processes with leader election
// on (the shipped 15 s lease, 10 s renew deadline) reach the API server through a gate
// (api-server-gate.ts) that refuses every connection for 15 s, longer than the renew deadline, so
// the leader loses its lease. Deliveries keep arriving at both replicas meanwhile: every one is
// answered 202, and once the API server is back every environment exists — the accepted ones
// written by the replica that accepted them, two whose webhooks were never sent found by the
// resync the (new) leader runs as it takes over. Neither process exits.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { KubeClient } from '../../src/kube/client.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { metricValue, spawnOperator, waitStarted, type OperatorProcess } from '../fixtures/cli/operator-process.js';
import { installCrds, operatorCrdFiles } from '../fixtures/crds/install-crds.js';
import { PullRequestDriver } from '../github-emulator/pull-requests.js';
import { startTestEmulator } from '../github-emulator/test-emulator.js';
import { ApiServerGate } from '../support/api-server-gate.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const cluster = await testCluster();
const gh = await startTestEmulator();
const admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'outage-test' });
const namespace = uniqueName('outage');
const outageMs = 15_000;
const delivered = 30;
let dir: string;
let gate: ApiServerGate;
let repo: PullRequestDriver;
const running: OperatorProcess[] = [];

before(async () => {
  await installCrds(
    cluster.kubeConfig,
    operatorCrdFiles.filter((f) => f.endsWith('previewenvironments.preview.alien6.io.yaml')),
  );
  await createNamespace(cluster.kubeConfig, namespace);
  gate = await ApiServerGate.start(cluster.server);
  repo = await PullRequestDriver.create(gh, { owner: 'acme', name: uniqueName('outage') });
  const app = gh.createApp();
  gh.installApp(app.id, [repo.repository]);
  dir = await mkdtemp(path.join(os.tmpdir(), 'outage-'));
  const caFile = cluster.kubeConfig.getCurrentCluster()!.caFile!;
  await writeFile(path.join(dir, 'kubeconfig'), kubeconfigYaml(gate.url, caFile, cluster.token));
  await writeFile(path.join(dir, 'key.pem'), app.privateKey);
  await writeFile(path.join(dir, 'secret'), `${repo.hook.secret}\n`);
  for (const identity of ['replica-a', 'replica-b']) {
    running.push(
      spawnOperator(['run', `--leader-election-identity=${identity}`], {
        KUBECONFIG: path.join(dir, 'kubeconfig'),
        // The intake and the resync: the other controllers would act on other test files' objects.
        PREVIEW_OPERATOR_CONTROLLERS: 'webhook,resync',
        PREVIEW_OPERATOR_LEADER_ELECTION_NAMESPACE: namespace,
        PREVIEW_OPERATOR_WEBHOOK_HOST: '127.0.0.1',
        PREVIEW_OPERATOR_WEBHOOK_PORT: '0',
        PREVIEW_OPERATOR_METRICS_PORT: '0',
        PREVIEW_OPERATOR_WEBHOOK_SECRET_FILE: path.join(dir, 'secret'),
        PREVIEW_OPERATOR_GITHUB_API_URL: gh.url,
        PREVIEW_OPERATOR_GITHUB_APP_ID: String(app.id),
        PREVIEW_OPERATOR_GITHUB_APP_PRIVATE_KEY_FILE: path.join(dir, 'key.pem'),
        PREVIEW_OPERATOR_CHECKOUT_CACHE_DIR: path.join(dir, `checkouts-${identity}`),
      }),
    );
  }
});

after(async () => {
  gate?.set('open');
  for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  for (let n = 1; n <= delivered + 2; n++) {
    await admin.delete({ ...previewEnvironmentKind, name: environmentName(repo.repository, n) }).catch(() => {});
  }
  await admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` }).catch(() => {});
  admin.close();
  await gate?.close();
  await repo?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

const leading = async (p: OperatorProcess) => (await metricValue(p.metricsUrl(), 'preview_operator_leader')) === 1;

async function present(): Promise<number[]> {
  const { items } = await admin.list(previewEnvironmentKind);
  const names = new Set(items.map((i) => i.metadata.name));
  return Array.from({ length: delivered + 2 }, (_, i) => i + 1).filter((n) => names.has(environmentName(repo.repository, n)));
}

test(
  `a ${outageMs / 1000}-s API server outage with leader election on: every delivery answered, every environment written`,
  { timeout: 300_000 },
  async () => {
    for (const p of running) await waitStarted(p);
    await waitFor('a leader', async () => (await Promise.all(running.map(leading))).some(Boolean), { timeoutMs: 60_000 });
    const leader = (await leading(running[0]!)) ? running[0]! : running[1]!;

    gate.set('refuse');
    const outageStarted = Date.now();
    const answers: number[] = [];
    // Two pull requests whose webhooks GitHub never sends: only the resync can find them.
    for (const n of [delivered + 1, delivered + 2])
      await repo.open({ number: n, files: { [`missed-${n}.txt`]: `${n}\n` }, author: 'alice', authorAssociation: 'MEMBER' });
    for (let n = 1; n <= delivered; n++) {
      const change = await repo.open({ number: n, files: { [`f-${n}.txt`]: `${n}\n` }, author: 'alice', authorAssociation: 'MEMBER' });
      // Half to each replica, the leader included, spread over the outage.
      const target = running[n % 2]!;
      const answer = await change.delivery.deliver(target.webhookUrl());
      answers.push(answer.status);
      const due = outageStarted + (n * outageMs) / delivered;
      await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    }
    assert.deepEqual(answers, Array(delivered).fill(202), "every delivery answered 202, the leader's too");
    assert.ok(
      leader.lines.some((l) => /lost the lease/.test(String(l.msg))),
      'the outage outlasted the renew deadline: the lease was lost',
    );
    assert.deepEqual(await present(), [], 'nothing could be written meanwhile');
    gate.set('open');
    const reopened = Date.now();

    await waitFor('every environment', async () => (await present()).length === delivered + 2, { timeoutMs: 60_000, intervalMs: 500 });
    const convergedMs = Date.now() - reopened;
    assert.ok(
      running.every((p) => p.child.exitCode === null),
      'no replica exited',
    );
    await waitFor('a leader again', async () => (await Promise.all(running.map(leading))).some(Boolean), { timeoutMs: 30_000 });
    process.stderr.write(
      `# ${delivered} deliveries during a ${outageMs / 1000}-s outage, 2 missed: all ${delivered + 2} environments ` +
        `${(convergedMs / 1000).toFixed(1)} s after the API server came back\n`,
    );
  },
);
