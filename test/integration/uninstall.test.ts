// Nothing is left behind: `npm run dev` on a cluster named by KUBECONFIG removes its previews
// (PreviewEnvironment, namespace and all) on Ctrl-C, its operator's finalizer doing the teardown;
// and the one command docs/install.md gives for a cluster whose operator is gone removes every
// preview although nothing can run the finalizer any more. A private cluster: dev runs every
// controller, which in the shared cluster would act on other test files' objects.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { previewEnvironmentFinalizer } from '../../src/controllers/preview-environment-teardown.js';
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { KubeClient, NotFoundError, type KubeObject } from '../../src/kube/index.js';
import { startCluster, type Cluster } from '../cluster/start-cluster.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { waitFor } from '../support/wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const previewLabel = 'preview.alien6.io/environment';
/** docs/install.md's command for a cluster without the operator; the requests below are what kubectl sends for it. */
const cleanupCommand =
  'kubectl get previewenvironments.preview.alien6.io -o name' +
  ' | xargs -r -n1 kubectl patch --type=merge -p \'{"metadata":{"finalizers":null}}\'' +
  ' && kubectl delete previewenvironments.preview.alien6.io --all' +
  ' && kubectl delete namespaces -l preview.alien6.io/environment';

let cluster: Cluster;
let admin: KubeClient;
before(async () => {
  cluster = await startCluster({ log: () => {}, keepsProcessAlive: false });
  await installCrds(cluster.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'uninstall-test' });
});
after(async () => {
  admin?.close();
  await cluster?.stop();
});

const environments = async () => (await admin.list(previewEnvironmentKind)).items.map((e) => e.metadata.name!).sort();
const previewNamespaces = async () =>
  (await admin.list({ apiVersion: 'v1', kind: 'Namespace' }, { labelSelector: previewLabel })).items.map((n) => n.metadata.name!).sort();

test('npm run dev with KUBECONFIG: Ctrl-C removes its PreviewEnvironments and their namespaces', { timeout: 300_000 }, async () => {
  const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: { dev: string } };
  const [, ...nodeArgs] = scripts.dev.split(/\s+/);
  // Every controller, as `npm run dev` runs by default: the preview is deployed into a namespace of its own.
  const child = spawn(process.execPath, nodeArgs, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', KUBECONFIG: cluster.kubeconfigPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor(
      'the demo preview deployed into its namespace',
      async () => {
        if (child.exitCode !== null) throw new Error(`dev exited ${child.exitCode}: ${err}\n${out}`);
        return (await environments()).length === 1 && (await previewNamespaces()).length === 1;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
    const [name] = await environments();
    const env = await admin.get({ ...previewEnvironmentKind, name: name! });
    assert.deepEqual(env.metadata.finalizers, [previewEnvironmentFinalizer], 'what an uninstall must get past');

    child.kill('SIGINT');
    assert.equal(await exited, 0, err);
    assert.match(out, /removing 1 PreviewEnvironment\(s\) and their namespaces/);
    assert.deepEqual(await environments(), [], 'no PreviewEnvironment left');
    assert.deepEqual(await previewNamespaces(), [], 'no preview namespace left');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});

test("without the operator: docs/install.md's one command removes every preview, finalizers and namespaces included", async () => {
  assert.ok(readFileSync(`${root}docs/install.md`, 'utf8').includes(cleanupCommand), 'the command is the one documented');
  // Three previews as the operator leaves them when it is uninstalled first: finalizer on, namespace with workloads.
  for (const n of [1, 2, 3]) {
    const name = `pr-${n}-shop-uninstall`;
    await admin.create({
      ...previewEnvironmentKind,
      metadata: { name, finalizers: [previewEnvironmentFinalizer] },
      spec: {
        repository: { owner: 'acme', name: 'shop', cloneUrl: 'https://github.com/acme/shop.git' },
        pullRequest: { number: n, headSha: 'a'.repeat(40), headRef: `f-${n}`, baseRef: 'main' },
      },
    } as KubeObject);
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [previewLabel]: name } } });
    await admin.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: name }, data: { n: String(n) } });
  }
  await admin.delete({ ...previewEnvironmentKind, name: 'pr-1-shop-uninstall' });
  const stuck = await admin.get({ ...previewEnvironmentKind, name: 'pr-1-shop-uninstall' });
  assert.ok(stuck.metadata.deletionTimestamp, 'deleted, and held by a finalizer nothing will remove');

  // kubectl get -o name | xargs kubectl patch: a merge patch per object.
  for (const name of await environments())
    await admin.patch({ ...previewEnvironmentKind, name }, 'merge', { metadata: { finalizers: null } });
  // kubectl delete --all, and -l: a list, then a delete per object.
  for (const name of await environments()) await ignoreMissing(admin.delete({ ...previewEnvironmentKind, name }));
  for (const name of await previewNamespaces()) await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name });

  assert.deepEqual(await environments(), []);
  await waitFor('the namespaces gone', async () => (await previewNamespaces()).length === 0, { timeoutMs: 120_000, intervalMs: 500 });
});

async function ignoreMissing(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
