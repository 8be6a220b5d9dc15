// Helm installs a chart's crds/ on the first install and never again: a `helm upgrade` to a chart
// whose CRD changed leaves the live CRD as it was. docs/install.md ("Upgrading") gives the step that
// does it, `helm show crds <chart> | kubectl apply --server-side --force-conflicts -f -`, before
// `helm upgrade`. Both halves run here with the real Helm on the local control plane: the upgrade
// alone changes nothing, the documented step changes the live CRD. The chart's CRDs are installed
// under a group of this run's own (the kinds and schemas unchanged), so the shared cluster's
// operator CRDs, which other test files apply at the same time, are never touched.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { chartDir, helm } from '../fixtures/helm/render-chart.js';
import { testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

type Crd = ManifestLike & {
  spec: { group: string; names: { plural: string }; versions: { additionalPrinterColumns?: { name: string }[] }[] };
};

const cluster = await testCluster();
const admin = cluster.kubeConfig;
const tmp = await mkdtemp(path.join(os.tmpdir(), 'helm-crd-upgrade-'));
const run = uniqueName('t');
const release = uniqueName('po');
const namespace = uniqueName('helm-crd');
const crdNames: string[] = [];

after(async () => {
  await helm('uninstall', release, '--namespace', namespace, '--kubeconfig', cluster.kubeconfigPath).catch(() => {});
  for (const name of crdNames)
    await kubeRequest(admin, 'DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`).catch(() => {});
  await kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
  await rm(tmp, { recursive: true, force: true });
});

/** A copy of the chart at `version`, its CRDs in this run's groups, each CRD passed through `edit`. */
async function chartCopy(version: string, edit: (crd: Crd) => void = () => {}): Promise<string> {
  const dir = path.join(tmp, version);
  await cp(chartDir, dir, { recursive: true });
  const chartFile = path.join(dir, 'Chart.yaml');
  await writeFile(chartFile, (await readFile(chartFile, 'utf8')).replace(/^version: .*$/m, `version: ${version}`));
  for (const file of await readdir(path.join(dir, 'crds'))) {
    const crd = parse(await readFile(path.join(dir, 'crds', file), 'utf8')) as Crd;
    crd.spec.group = `${run}.${crd.spec.group}`;
    crd.metadata.name = `${crd.spec.names.plural}.${crd.spec.group}`;
    edit(crd);
    await writeFile(path.join(dir, 'crds', file), stringify(crd));
  }
  return dir;
}

const previewCrdName = () => crdNames.find((n) => n.startsWith('previewenvironments.'))!;
const liveColumns = async () => {
  const live = (await kubeRequest(admin, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${previewCrdName()}`)) as Crd;
  return live.spec.versions[0]!.additionalPrinterColumns?.map((c) => c.name) ?? [];
};
const upgradedColumn = { name: 'Shard', type: 'string', description: 'Added by chart 0.2.0.', jsonPath: '.metadata.labels.shard' };

test('helm upgrade leaves a changed CRD as it was; the documented server-side apply of `helm show crds` updates it', async () => {
  const helmArgs = ['--namespace', namespace, '--kubeconfig', cluster.kubeconfigPath];
  const v1 = await chartCopy('0.1.0');
  await helm('install', release, v1, '--create-namespace', ...helmArgs);
  for (const file of await readdir(path.join(v1, 'crds')))
    crdNames.push((parse(await readFile(path.join(v1, 'crds', file), 'utf8')) as Crd).metadata.name);
  const before = await liveColumns();
  assert.ok(before.includes('Phase') && !before.includes('Shard'), `installed from crds/: ${before.join(', ')}`);

  const v2 = await chartCopy('0.2.0', (crd) => {
    if (crd.spec.names.plural === 'previewenvironments') crd.spec.versions[0]!.additionalPrinterColumns!.push(upgradedColumn);
  });
  await helm('upgrade', release, v2, ...helmArgs);
  assert.deepEqual(await liveColumns(), before, 'Helm does not upgrade crds/ (if this changes, docs/install.md can drop the step)');

  // The documented step: `helm show crds` piped to `kubectl apply --server-side --force-conflicts -f -`,
  // which sends each document as an apply patch with field manager kubectl, forced.
  const { stdout } = await helm('show', 'crds', v2);
  const shown = parseAllDocuments(stdout)
    .map((d) => d.toJS() as Crd | null)
    .filter((d): d is Crd => d !== null);
  assert.deepEqual(shown.map((c) => c.metadata.name).sort(), [...crdNames].sort());
  for (const crd of shown) await serverSideApply(admin, crd, { fieldManager: 'kubectl', force: true });
  await waitFor('the live CRD to carry the new column', async () => (await liveColumns()).includes('Shard'));
  assert.deepEqual(await liveColumns(), [...before, 'Shard']);
  // And the release goes on upgrading as before.
  await helm('upgrade', release, v2, ...helmArgs);
  const history = await helm('history', release, '--output', 'json', ...helmArgs);
  assert.deepEqual(
    (JSON.parse(history.stdout) as { status: string }[]).map((r) => r.status),
    ['superseded', 'superseded', 'deployed'],
  );
});
