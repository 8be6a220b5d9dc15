// `npm run dev` (test/dev/dev.ts) with KUBECONFIG set: it uses that cluster, starts the GitHub
// emulator and the operator, opens the demo pull request, prints the three lines a second
// terminal needs (each on its own line), serves webhooks and metrics, and tears down on Ctrl-C,
// the demo's PreviewEnvironment included.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { KubeRequestError, kubeRequest } from '../fixtures/crds/kube-apply.js';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { testCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The node arguments of package.json's `dev` script: the test runs what `npm run dev` runs. */
function devScript(): string[] {
  const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: { dev: string } };
  const [command, ...args] = scripts.dev.split(/\s+/);
  assert.equal(command, 'node');
  return args;
}

test('dev on an existing cluster: demo pull request recorded, KUBECONFIG / webhook / metrics / dashboard lines, clean Ctrl-C', async () => {
  const cluster = await testCluster();
  // Controllers that touch only the demo's objects: this cluster is shared with other test files.
  const child = spawn(process.execPath, [...devScript(), '--controllers=webhook,resync'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', KUBECONFIG: cluster.kubeconfigPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const name = environmentName({ owner: 'demo', name: 'shop' }, 1);
  try {
    await waitFor(
      'dev to be up',
      () => {
        if (child.exitCode !== null) throw new Error(`dev exited ${child.exitCode}: ${err}`);
        return out.includes('Ctrl-C tears everything down') && out.includes('environment pr-1-shop');
      },
      { timeoutMs: 120_000 },
    );
    const lines = out.split('\n');
    assert.ok(lines.includes(`export KUBECONFIG=${cluster.kubeconfigPath}`), out);
    const webhook = lines.find((l) => l.startsWith('webhook: '))!.slice('webhook: '.length);
    const metrics = lines.find((l) => l.startsWith('metrics: '))!.slice('metrics: '.length);
    assert.match(webhook, /^http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks$/);
    assert.match(
      out,
      /pull request #1 opened by alice; webhook answered 202 .*"result":"accepted".*"environment":"pr-1-shop-[^"]+","op":"upsert"/,
    );
    // The demo's PreviewEnvironment is written after the answer; the metrics counted the delivery and the write.
    const env = await waitFor(
      'the demo PreviewEnvironment',
      () =>
        kubeRequest(cluster.kubeConfig, 'GET', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`) as Promise<{
          spec: { repository: { owner: string; cloneUrl: string } };
        }>,
      { timeoutMs: 30_000 },
    );
    assert.equal(env.spec.repository.owner, 'demo');
    assert.match(env.spec.repository.cloneUrl, /^file:\/\//);
    assert.match(
      await (await fetch(metrics)).text(),
      /preview_operator_webhook_deliveries_total\{event="pull_request",result="accepted",status="202"\} 1/,
    );
    await waitFor(
      'the write counted',
      async () => /preview_operator_webhook_writes_total\{op="upsert",result="upserted"\} 1/.test(await (await fetch(metrics)).text()),
      { timeoutMs: 10_000 },
    );
    assert.match(await (await fetch(metrics)).text(), /^preview_operator_webhook_writes_pending 0$/m);
    assert.equal((await fetch(webhook)).status, 405);
    // The dashboard's line: the demo environment is on it.
    const dashboard = lines.find((l) => l.startsWith('dashboard: '))!.slice('dashboard: '.length);
    assert.match(dashboard, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    await waitFor(
      'the demo environment on the dashboard',
      async () => (await (await fetch(dashboard)).text()).includes(`data-name="${name}"`),
      { timeoutMs: 10_000 },
    );

    child.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.match(out, /stopping…/);
    await assert.rejects(fetch(metrics), "the operator's server is closed");
    // Nothing of the demo stays in a cluster dev did not start.
    assert.match(out, /removing 1 PreviewEnvironment\(s\) and their namespaces: pr-1-shop-/);
    await assert.rejects(
      kubeRequest(cluster.kubeConfig, 'GET', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`),
      /404|not found/i,
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await kubeRequest(cluster.kubeConfig, 'DELETE', `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`).catch((e: unknown) => {
      if (!(e instanceof KubeRequestError && e.statusCode === 404)) throw e;
    });
  }
});
