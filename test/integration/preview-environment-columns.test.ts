// `kubectl get previews` as the real API server prints it (its Table output, which kubectl shows
// as is): the EXPIRES column gives the expiry time, a time to come, not `<invalid>` (what a `date`
// column makes of a future time), and the columns a user reads at a glance.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { previewEnvironmentKind } from '../../constructs/index.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { kubeRequest, serverSideApply } from '../fixtures/crds/kube-apply.js';
import { testCluster, uniqueName } from '../support/test-cluster.js';

const cluster = await testCluster();
const kc = cluster.kubeConfig;
const name = uniqueName('pr-7-columns');
const path = `/apis/preview.alien6.io/v1alpha1/previewenvironments/${name}`;

before(async () => {
  await installCrds(kc);
  await serverSideApply(
    kc,
    {
      ...previewEnvironmentKind,
      metadata: { name },
      spec: {
        repository: { owner: 'acme', name: 'columns', cloneUrl: 'https://github.com/acme/columns.git' },
        pullRequest: {
          number: 7,
          headSha: 'a'.repeat(40),
          headRef: 'feature',
          baseRef: 'main',
          author: 'alice',
          authorAssociation: 'MEMBER',
        },
      },
    },
    { fieldManager: 'columns-test' },
  );
});
after(() => kubeRequest(kc, 'DELETE', path).catch(() => {}));

interface Table {
  columnDefinitions: { name: string; type: string; priority: number }[];
  rows: { cells: unknown[] }[];
}

it('EXPIRES shows the expiry time of an environment that expires tomorrow, not <invalid>', async () => {
  const expiresAt = new Date(Date.now() + 24 * 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const live = (await kubeRequest(kc, 'GET', path)) as { metadata: { resourceVersion: string } };
  await kubeRequest(
    kc,
    'PATCH',
    `${path}/status`,
    {
      metadata: { resourceVersion: live.metadata.resourceVersion },
      status: { phase: 'Ready', url: 'https://columns-pr-7.preview.example.com', deployedSha: 'a'.repeat(40), expiresAt },
    },
    'application/merge-patch+json',
  );

  const table = (await kubeRequest(kc, 'GET', path, undefined, undefined, 'application/json;as=Table;v=v1;g=meta.k8s.io')) as Table;
  const columns = table.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name);
  assert.deepEqual(columns, ['Name', 'Repository', 'PR', 'Phase', 'URL', 'Expires', 'Age']);
  const index = table.columnDefinitions.findIndex((c) => c.name === 'Expires');
  const row = table.rows[0]!.cells;
  assert.equal(row[index], expiresAt);
  assert.deepEqual([row[1], row[2], row[3]], ['columns', 7, 'Ready']);
});
