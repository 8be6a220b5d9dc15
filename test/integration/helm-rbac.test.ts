// The chart's RBAC, proven against a real API server: the chart's ServiceAccount, with the
// chart's ClusterRole, Role and bindings, can do every operation the operator's code makes
// (SelfSubjectAccessReview, then real requests: leader election, a namespace with objects
// and a Role in it) and nothing broader — no wildcard, no escalation, nothing cluster-wide
// beyond what is listed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { KubeClient } from '../../src/kube/client.js';
import { LeaderElector } from '../../src/kube/leader-election.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { KubeRequestError, kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { renderChart } from '../fixtures/helm/render-chart.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

type Access = { verb: string; group: string; resource: string; subresource?: string; namespace?: string; name?: string };

const applied = ['get', 'list', 'create', 'patch', 'delete'];
const watched = [...applied, 'watch'];
const all = (group: string, resources: string[], verbs: string[]): Access[] =>
  resources.flatMap((resource) => verbs.map((verb) => ({ verb, group, resource })));

/**
 * What the operator's code does (src/kube, src/controllers, src/github, the rendered kinds of src/synth):
 * server-side apply (get, patch, and create for a new object), prune (list, delete), informers (watch),
 * status and finalizers by merge patch, `update` only on `/finalizers` (blockOwnerDeletion) and the Lease.
 */
function neededAccess(leaseNamespace: string, leaseName: string): Access[] {
  const own = { previewenvironments: 'preview.alien6.io', algorithms: 'ai.alien6.io', databases: 'mycompany.com' };
  return [
    ...Object.entries(own).flatMap(([resource, group]) => [
      ...all(group, [resource], watched),
      { verb: 'patch', group, resource, subresource: 'status' },
      { verb: 'update', group, resource, subresource: 'finalizers' },
    ]),
    ...all('', ['namespaces', 'configmaps', 'secrets', 'services', 'resourcequotas', 'limitranges', 'serviceaccounts'], watched),
    ...all('', ['persistentvolumeclaims', 'pods'], applied),
    ...all('apps', ['deployments', 'statefulsets'], watched),
    ...all('batch', ['jobs', 'cronjobs'], applied),
    ...all('autoscaling', ['horizontalpodautoscalers'], watched),
    ...all('policy', ['poddisruptionbudgets'], watched),
    ...all('networking.k8s.io', ['ingresses', 'networkpolicies'], watched),
    ...all('rbac.authorization.k8s.io', ['roles', 'rolebindings'], applied),
    ...all('cert-manager.io', ['certificates'], applied),
    ...all('cert-manager.io', ['clusterissuers', 'issuers'], ['get']),
    { verb: 'create', group: '', resource: 'events' },
    { verb: 'patch', group: '', resource: 'events' },
    // The dashboard's Events of an environment (no watch: a bounded list while its page is open).
    { verb: 'list', group: '', resource: 'events' },
    { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace },
    { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace, name: leaseName },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace, name: leaseName },
  ];
}

/** Broader than the operator needs: each must be denied. */
function forbiddenAccess(leaseNamespace: string): Access[] {
  return [
    { verb: '*', group: '*', resource: '*' },
    { verb: '*', group: '', resource: 'secrets' },
    { verb: 'deletecollection', group: '', resource: 'namespaces' },
    { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles' },
    { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
    { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
    { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' },
    { verb: 'impersonate', group: '', resource: 'users' },
    { verb: 'get', group: '', resource: 'nodes' },
    { verb: 'create', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
    { verb: 'create', group: 'apps', resource: 'daemonsets' },
    { verb: 'create', group: 'admissionregistration.k8s.io', resource: 'validatingwebhookconfigurations' },
    { verb: 'create', group: 'gateway.networking.k8s.io', resource: 'httproutes' },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'kube-system', name: 'kube-controller-manager' },
    { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: leaseNamespace, name: 'another-lease' },
    // Verbs the code never sends: no PUT but the Lease and `/finalizers`, no watch without an informer, no token minting.
    { verb: 'create', group: '', resource: 'serviceaccounts', subresource: 'token' },
    { verb: 'update', group: 'apps', resource: 'deployments' },
    { verb: 'update', group: '', resource: 'secrets' },
    { verb: 'update', group: '', resource: 'namespaces' },
    { verb: 'update', group: 'preview.alien6.io', resource: 'previewenvironments' },
    { verb: 'update', group: 'preview.alien6.io', resource: 'previewenvironments', subresource: 'status' },
    { verb: 'get', group: 'ai.alien6.io', resource: 'algorithms', subresource: 'status' },
    { verb: 'watch', group: '', resource: 'pods' },
    { verb: 'watch', group: 'rbac.authorization.k8s.io', resource: 'roles' },
    { verb: 'delete', group: '', resource: 'events' },
  ];
}

async function allowed(kc: KubeConfig, access: Access): Promise<boolean> {
  const review = (await kubeRequest(kc, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        verb: access.verb,
        group: access.group,
        resource: access.resource,
        subresource: access.subresource,
        namespace: access.namespace,
        name: access.name,
      },
    },
  })) as { status: { allowed: boolean } };
  return review.status.allowed;
}

const show = (a: Access) =>
  `${a.verb} ${a.group || 'core'}/${a.resource}${a.subresource ? `/${a.subresource}` : ''}${a.namespace ? ` in ${a.namespace}` : ''}${a.name ? ` named ${a.name}` : ''}`;

const cluster = await testCluster();
const admin = cluster.kubeConfig;
const namespace = uniqueName('helm-rbac');
const release = uniqueName('po');
let rendered: ManifestLike[] = [];
let operator: KubeConfig;

before(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  rendered = await renderChart({ release, namespace });
  for (const object of rendered.filter((o) =>
    ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(o.kind),
  )) {
    await serverSideApply(admin, object, { fieldManager: 'helm-test', namespace });
  }
  const serviceAccount = rendered.find((o) => o.kind === 'ServiceAccount')!.metadata.name;
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name: serviceAccount,
    body: { spec: { expirationSeconds: 3600, audiences: [] } },
  });
  operator = new KubeConfig();
  operator.loadFromString(kubeconfigYaml(cluster.server, admin.getCurrentCluster()!.caFile!, token.status!.token, serviceAccount));
});

after(async () => {
  for (const object of rendered.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')) {
    await kubeRequest(
      admin,
      'DELETE',
      `/apis/rbac.authorization.k8s.io/v1/${object.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings'}/${object.metadata.name}`,
    ).catch(() => {});
  }
  await kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${namespace}`).catch(() => {});
});

test("the chart's ServiceAccount may do every operation the operator makes", async () => {
  const denied: string[] = [];
  for (const access of neededAccess(namespace, 'preview-operator')) if (!(await allowed(operator, access))) denied.push(show(access));
  assert.deepEqual(denied, []);
});

test('and nothing broader: no wildcard, no escalation, no other cluster-wide kinds, no other Lease', async () => {
  const granted: string[] = [];
  for (const access of forbiddenAccess(namespace)) if (await allowed(operator, access)) granted.push(show(access));
  assert.deepEqual(granted, []);
});

test('real requests with the token: leader election, a preview namespace with objects and a Role, the APIs', async () => {
  const client = new KubeClient(operator);
  // Leader election exactly as the operator runs it: create the Lease, renew it, release it.
  let leading = false;
  const elector = new LeaderElector(client, {
    namespace,
    name: 'preview-operator',
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
    onStartedLeading: () => (leading = true),
  });
  elector.start();
  await waitFor('the chart identity to take the lease', () => leading, { timeoutMs: 15_000 });
  await elector.stop();

  const crd = (await kubeRequest(
    admin,
    'GET',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/previewenvironments.preview.alien6.io',
  )) as { spec: { versions: { name: string }[] } };
  const paths = [
    `/apis/preview.alien6.io/${crd.spec.versions[0]!.name}/previewenvironments`,
    '/apis/ai.alien6.io/v1/algorithms',
    '/apis/mycompany.com/v1/databases',
    '/api/v1/secrets',
    '/apis/apps/v1/deployments',
  ];
  for (const path of paths) {
    // A freshly installed CRD's storage may answer 429 for a moment; anything else fails the wait.
    await waitFor(
      `GET ${path} as the operator`,
      async () => {
        try {
          return await kubeRequest(operator, 'GET', path);
        } catch (err) {
          if (err instanceof KubeRequestError && err.statusCode === 429) return undefined;
          throw err;
        }
      },
      { timeoutMs: 30_000 },
    );
  }

  const preview = uniqueName('pr-1-rbac');
  await serverSideApply(
    operator,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: preview } },
    { fieldManager: 'preview-operator' },
  );
  try {
    await serverSideApply(
      operator,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'env', namespace: preview }, data: { A: '1' } },
      { fieldManager: 'preview-operator' },
    );
    await serverSideApply(
      operator,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'read-config', namespace: preview },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      { fieldManager: 'preview-operator' },
    );
    // A rendered Role can grant no more than the operator holds: the API server refuses it.
    await assert.rejects(
      serverSideApply(
        operator,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'read-nodes', namespace: preview },
          rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] }],
        },
        { fieldManager: 'preview-operator' },
      ),
      (err: unknown) => err instanceof KubeRequestError && err.statusCode === 403 && /escalat|forbidden/i.test(err.message),
    );
    await kubeRequest(operator, 'POST', `/api/v1/namespaces/${preview}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'env.1', namespace: preview },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'env', namespace: preview },
      reason: 'Applied',
      message: 'rbac test',
      type: 'Normal',
      source: { component: 'preview-operator' },
    });
    await assert.rejects(
      kubeRequest(operator, 'GET', '/api/v1/nodes'),
      (err: unknown) => err instanceof KubeRequestError && err.statusCode === 403,
    );
  } finally {
    await kubeRequest(operator, 'DELETE', `/api/v1/namespaces/${preview}`);
  }
});
