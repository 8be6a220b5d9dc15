// The chart's admission policy, proven on a real API server: the operator's ServiceAccount, with
// the chart's RBAC and policy and its own token, attacks as issue 19 found it could — a token
// Secret for a cluster-admin ServiceAccount, RBAC in kube-system, namespaces it does not own, a
// Role that lifts a preview's guards, cluster-admin through a RoleBinding — and each is refused
// with the policy's message; with its RBAC broadened by mistake, the policy still holds. The same
// identity does everything the operator does: a preview applied by the operator's own Applier,
// the Algorithm and Database children, status, finalizers, Events, the Lease, teardown.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { renderAlgorithmWorkloads, renderDatabaseWorkloads } from '../../constructs/index.js';
import { exampleIdentity, renderExamplePreview } from '../../examples/example-preview.js';
import { ensureCredentialsSecret } from '../../src/controllers/credentials-secret.js';
import { previewEnvironmentFinalizer } from '../../src/controllers/preview-environment.js';
import { environmentObject } from '../../src/intake/environment-store.js';
import {
  Applier,
  EventRecorder,
  KubeClient,
  LeaderElector,
  addFinalizer,
  controllerReference,
  refOf,
  removeFinalizer,
  updateStatus,
  type KubeObject,
  type Logger,
} from '../../src/kube/index.js';
import { installCrds } from '../fixtures/crds/install-crds.js';
import { KubeRequestError, kubeRequest, serverSideApply, type ManifestLike } from '../fixtures/crds/kube-apply.js';
import { renderChart } from '../fixtures/helm/render-chart.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

const cluster = await testCluster();
const admin = cluster.kubeConfig;
const release = uniqueName('po');
const namespace = uniqueName('admission');
/** Where users create Algorithms by hand: one named in the values, one picked by a label. */
const teamNamespace = uniqueName('team');
const selectedNamespace = uniqueName('selected');
const selectorLabel = 'admission-test/owner';
/** Unlabelled, with a ServiceAccount bound to cluster-admin: what an attacker wants a token of. */
const victim = uniqueName('victim');
const preview = uniqueName('pr-7-attack');
const ownership = 'preview.alien6.io/environment';
const podSecurity = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };
const rbacApi = '/apis/rbac.authorization.k8s.io/v1';
const mergePatch = 'application/merge-patch+json';
const cleanups: (() => Promise<unknown>)[] = [];
let serviceAccount: string;
let operator: KubeConfig;

/** Refused by the chart's policy: 403, the policy named, and its message. */
async function refusedByPolicy(request: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(request, (err: unknown) => {
    assert.ok(err instanceof KubeRequestError, String(err));
    assert.equal(err.statusCode, 403, err.message);
    assert.match(err.message, new RegExp(`ValidatingAdmissionPolicy '${release}-preview-operator-confinement'`), err.message);
    assert.match(err.message, message);
    return true;
  });
}

const post = (kc: KubeConfig, path: string, body: unknown, dryRun = false) =>
  kubeRequest(kc, 'POST', dryRun ? `${path}?dryRun=All` : path, body);
const role = (name: string, ns: string, rules: unknown[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace: ns },
  rules,
});
const binding = (name: string, ns: string, roleRef: { kind: string; name: string }, subjects: unknown[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace: ns },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
  subjects,
});
const configMap = (name: string, ns: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: {} });
const readConfig = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }];

/** Applies as admin; cluster-scoped objects are deleted after the file. */
async function applyAsAdmin(object: ManifestLike): Promise<void> {
  await serverSideApply(admin, object, { fieldManager: 'admission-policy-test', namespace });
  const plural = { ClusterRole: 'clusterroles', ClusterRoleBinding: 'clusterrolebindings' }[object.kind];
  if (plural) cleanups.push(() => kubeRequest(admin, 'DELETE', `${rbacApi}/${plural}/${object.metadata.name}`));
  if (object.kind.startsWith('ValidatingAdmissionPolicy')) {
    const path = `/apis/admissionregistration.k8s.io/v1/${object.kind.toLowerCase()}s/${object.metadata.name}`;
    cleanups.push(() => kubeRequest(admin, 'DELETE', path));
  }
}

/** The chart's identity and policy (with the two kinds of extra namespaces), and the operator's token. */
async function installChart(): Promise<void> {
  const objects = await renderChart({
    release,
    namespace,
    set: [
      `admissionPolicy.extraNamespaces[0]=${teamNamespace}`,
      `admissionPolicy.extraNamespaceSelector.matchLabels.${selectorLabel}=${release}`,
    ],
  });
  const kinds = [
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'Role',
    'RoleBinding',
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ];
  for (const object of objects.filter((o) => kinds.includes(o.kind))) await applyAsAdmin(object);
  serviceAccount = objects.find((o) => o.kind === 'ServiceAccount')!.metadata.name;
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name: serviceAccount,
    body: { spec: { expirationSeconds: 3600, audiences: [] } },
  });
  operator = new KubeConfig();
  operator.loadFromString(kubeconfigYaml(cluster.server, admin.getCurrentCluster()!.caFile!, token.status!.token, serviceAccount));
}

before(async () => {
  await installCrds(admin);
  for (const ns of [namespace, teamNamespace, victim]) await createNamespace(admin, ns);
  await createNamespace(admin, selectedNamespace, { [selectorLabel]: release });
  for (const ns of [namespace, teamNamespace, selectedNamespace, victim]) {
    cleanups.push(() => kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${ns}`));
  }
  await post(admin, `/api/v1/namespaces/${victim}/serviceaccounts`, { metadata: { name: 'controller' } });
  await applyAsAdmin({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${victim}-controller` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'controller', namespace: victim }],
  });
  await installChart();
  // A new policy takes a moment to be enforced: until a canary (a dry run) is refused by it.
  await waitFor(
    'the admission policy to be enforced',
    async () => {
      try {
        await post(operator, '/api/v1/namespaces', { metadata: { name: uniqueName('canary') } }, true);
        return false;
      } catch (err) {
        if (err instanceof KubeRequestError && err.statusCode === 403 && /confinement/.test(err.message)) return true;
        throw err;
      }
    },
    { timeoutMs: 30_000 },
  );
  // The preview namespace the attacks run in, as the operator creates one.
  await post(operator, '/api/v1/namespaces', { metadata: { name: preview, labels: { [ownership]: preview, ...podSecurity } } });
  cleanups.push(() => kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${preview}`));
});

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

test('a token Secret for a cluster-admin ServiceAccount is refused, anywhere, and no token can be read back', async () => {
  const tokenSecret = (ns: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/service-account-token',
    metadata: { name: 'stolen', namespace: ns, annotations: { 'kubernetes.io/service-account.name': 'controller' } },
  });
  for (const ns of [victim, preview]) {
    await refusedByPolicy(
      post(operator, `/api/v1/namespaces/${ns}/secrets`, tokenSecret(ns)),
      /Secret of type kubernetes\.io\/service-account-token/,
    );
  }
  await assert.rejects(
    kubeRequest(operator, 'GET', `/api/v1/namespaces/${victim}/secrets/stolen`),
    (err: unknown) => err instanceof KubeRequestError && err.statusCode === 404,
  );
  const secrets = (await kubeRequest(admin, 'GET', `/api/v1/namespaces/${victim}/secrets`)) as { items: { type: string }[] };
  assert.deepEqual(
    secrets.items.filter((s) => s.type === 'kubernetes.io/service-account-token'),
    [],
  );
  // A TokenRequest is not in the chart's RBAC at all.
  await assert.rejects(
    post(operator, `/api/v1/namespaces/${victim}/serviceaccounts/controller/token`, { spec: { audiences: [] } }),
    (err: unknown) => err instanceof KubeRequestError && err.statusCode === 403,
  );
});

test('RBAC in kube-system: a Role and a RoleBinding are refused, as is any write outside the namespaces it owns', async () => {
  const inKubeSystem = /may not CREATE (roles|rolebindings)\.rbac\.authorization\.k8s\.io in namespace kube-system: it writes only in/;
  await refusedByPolicy(post(operator, `${rbacApi}/namespaces/kube-system/roles`, role('pwn', 'kube-system', readConfig)), inKubeSystem);
  // A Role that exists there and grants nothing the operator lacks, so RBAC's own escalation check lets it through:
  // bound to the operator itself (a subject of another namespace), or to a ServiceAccount of kube-system.
  const reader = { kind: 'Role', name: 'extension-apiserver-authentication-reader' };
  const rolebindings = `${rbacApi}/namespaces/kube-system/rolebindings`;
  const itself = { kind: 'ServiceAccount', name: serviceAccount, namespace };
  await refusedByPolicy(
    post(operator, rolebindings, binding('pwn', 'kube-system', reader, [itself])),
    /may not write RoleBinding kube-system\/pwn: its subjects must be ServiceAccounts of its own namespace/,
  );
  const systemAccount = { kind: 'ServiceAccount', name: 'default', namespace: 'kube-system' };
  await refusedByPolicy(post(operator, rolebindings, binding('pwn', 'kube-system', reader, [systemAccount])), inKubeSystem);
  for (const ns of [victim, namespace]) {
    await refusedByPolicy(
      post(operator, `/api/v1/namespaces/${ns}/configmaps`, configMap('pwn', ns)),
      new RegExp(`may not CREATE configmaps in namespace ${ns}`),
    );
  }
  // Events: in its previews and, about a PreviewEnvironment, in `default`; not about anything else there.
  await refusedByPolicy(
    post(operator, '/api/v1/namespaces/default/events', {
      metadata: { name: uniqueName('forged'), namespace: 'default' },
      involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: 'default' },
      reason: 'Forged',
      message: 'not a PreviewEnvironment',
      type: 'Normal',
    }),
    /may not CREATE events in namespace default/,
  );
});

test('namespaces: an unlabelled one is not created, labelled afterwards or deleted; a labelled one must enforce Pod Security', async () => {
  await refusedByPolicy(
    post(operator, '/api/v1/namespaces', { metadata: { name: uniqueName('unlabelled') } }),
    /may create only Namespaces labelled preview\.alien6\.io\/environment.*is not labelled/,
  );
  const label = (name: string, value: string | null) =>
    kubeRequest(operator, 'PATCH', `/api/v1/namespaces/${name}`, { metadata: { labels: { [ownership]: value } } }, mergePatch);
  await refusedByPolicy(label(victim, 'mine'), new RegExp(`${victim} does not carry it`));
  await refusedByPolicy(kubeRequest(operator, 'DELETE', `/api/v1/namespaces/${victim}`), new RegExp(`${victim} does not carry it`));
  await refusedByPolicy(label(preview, null), new RegExp(`${preview} would lose the label`));
  const lax = [
    { 'pod-security.kubernetes.io/enforce': 'privileged' },
    {},
    { ...podSecurity, 'pod-security.kubernetes.io/enforce-version': 'v1.0' },
  ];
  for (const labels of lax) {
    const body = { metadata: { name: uniqueName('pr-8-lax'), labels: { [ownership]: 'x', ...labels } } };
    await refusedByPolicy(
      post(operator, '/api/v1/namespaces', body, true),
      /may write only Namespaces that enforce Pod Security restricted/,
    );
  }
  type Namespace = { metadata: { labels?: Record<string, string>; deletionTimestamp?: string } };
  const live = (await kubeRequest(admin, 'GET', `/api/v1/namespaces/${victim}`)) as Namespace;
  assert.equal(live.metadata.deletionTimestamp, undefined);
  assert.equal(live.metadata.labels?.[ownership], undefined);
});

test('in a preview namespace: a Role that would lift the guards or reach RBAC is refused', async () => {
  // Each grants only what the operator holds, so RBAC's escalation check would let it through.
  const rules = [
    // Bound inside the namespace, it authorises requests for the Namespace itself: its Pod Security label, its ownership.
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'patch'] },
    { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['delete'] },
    { apiGroups: [''], resources: ['resourcequotas'], verbs: ['patch'] },
    { apiGroups: [''], resources: ['limitranges'], verbs: ['delete'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create'] },
    // The namespace's default ServiceAccount is a guard (no token mounted): a holder could turn that back on.
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['patch'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['delete'] },
  ];
  for (const rule of rules) {
    await refusedByPolicy(
      post(operator, `${rbacApi}/namespaces/${preview}/roles`, role('lift', preview, [rule])),
      /may not write Role .*\/lift: its rules touch namespaces, networkpolicies, resourcequotas, limitranges or rbac\.authorization\.k8s\.io, write serviceaccounts/,
    );
  }
  // Reading them lifts nothing.
  const reader = role(uniqueName('sa-reader'), preview, [{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['get', 'list'] }]);
  await post(operator, `${rbacApi}/namespaces/${preview}/roles`, reader);
});

test('in a preview namespace, for everyone (a cluster admin, a controller): externalIPs, ExternalName, nodeName, long grace, inline CSI', async () => {
  const policy = `${release}-preview-operator-preview-namespaces`;
  const refusedInNamespace = (request: Promise<unknown>, message: RegExp) =>
    assert.rejects(request, (err: unknown) => {
      assert.ok(err instanceof KubeRequestError, String(err));
      assert.equal(err.statusCode, 403, err.message);
      assert.match(err.message, new RegExp(`ValidatingAdmissionPolicy '${policy}'`), err.message);
      assert.match(err.message, message);
      return true;
    });
  const service = (ns: string, spec: object) => ({
    metadata: { name: uniqueName('svc'), namespace: ns },
    spec: { ports: [{ port: 80 }], ...spec },
  });
  const intercept = { externalIPs: ['10.96.0.10'], selector: { app: 'web' } };
  await waitFor(
    'the preview namespaces policy to be enforced',
    () =>
      post(admin, `/api/v1/namespaces/${preview}/services`, service(preview, intercept), true).then(
        () => false,
        () => true,
      ),
    { timeoutMs: 30_000 },
  );
  const services = `/api/v1/namespaces/${preview}/services`;
  await refusedInNamespace(post(admin, services, service(preview, intercept)), /may not set spec\.externalIPs/);
  await refusedInNamespace(
    post(admin, services, service(preview, { type: 'ExternalName', externalName: 'kubernetes.default.svc' })),
    /ExternalName/,
  );
  // An ordinary Service passes; outside the preview namespaces the policy does not apply.
  await post(admin, services, service(preview, { selector: { app: 'web' } }), true);
  await post(admin, `/api/v1/namespaces/${victim}/services`, service(victim, intercept), true);

  const container = {
    name: 'c',
    image: 'registry.example.com/app:1',
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
  const pod = (spec: object) => ({ metadata: { name: uniqueName('pod'), namespace: preview }, spec: { containers: [container], ...spec } });
  const pods = `/api/v1/namespaces/${preview}/pods`;
  await refusedInNamespace(post(admin, pods, pod({ nodeName: 'control-plane' })), /may not set spec\.nodeName \(control-plane\)/);
  await refusedInNamespace(
    post(admin, pods, pod({ terminationGracePeriodSeconds: 315_360_000 })),
    /terminationGracePeriodSeconds above 300 \(315360000\)/,
  );
  const csi = {
    name: 'tls',
    csi: { driver: 'csi.cert-manager.io', volumeAttributes: { 'csi.cert-manager.io/issuer-name': 'production' } },
  };
  await refusedInNamespace(post(admin, pods, pod({ volumes: [csi] })), /inline CSI volumes only of the drivers .* \(none\)/);
  await post(admin, pods, pod({ terminationGracePeriodSeconds: 30 }), true);

  // A Deployment is no way around it: the ReplicaSet controller's pods are refused in turn.
  const name = uniqueName('pinned');
  const template = { metadata: { labels: { app: name } }, spec: { nodeName: 'control-plane', containers: [container] } };
  await post(admin, `/apis/apps/v1/namespaces/${preview}/deployments`, {
    metadata: { name, namespace: preview },
    spec: { replicas: 1, selector: { matchLabels: { app: name } }, template },
  });
  type ReplicaSets = { items: { status?: { conditions?: { type: string; message?: string }[] } }[] };
  const failure = async () => {
    const sets = (await kubeRequest(
      admin,
      'GET',
      `/apis/apps/v1/namespaces/${preview}/replicasets?labelSelector=app=${name}`,
    )) as ReplicaSets;
    return sets.items[0]?.status?.conditions?.find((c) => c.type === 'ReplicaFailure')?.message;
  };
  await waitFor('the ReplicaSet to report its pod refused', async () => (await failure()) !== undefined, { timeoutMs: 30_000 });
  assert.match((await failure())!, new RegExp(`${policy}.*spec\\.nodeName`));
  const created = (await kubeRequest(admin, 'GET', `${pods}?labelSelector=app=${name}`)) as { items: unknown[] };
  assert.equal(created.items.length, 0);
});

test('RoleBindings: a ClusterRole outside the allow-list or a subject elsewhere is refused; cluster-admin by RBAC too', async () => {
  const clusterRole = `${release}-read-config`;
  await applyAsAdmin({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: clusterRole },
    rules: readConfig,
  });
  const rolebindings = `${rbacApi}/namespaces/${preview}/rolebindings`;
  const inNamespace = [{ kind: 'ServiceAccount', name: 'default', namespace: preview }];
  await refusedByPolicy(
    post(operator, rolebindings, binding('reader', preview, { kind: 'ClusterRole', name: clusterRole }, inNamespace)),
    new RegExp(`may not bind ClusterRole ${clusterRole} \\(RoleBinding ${preview}/reader\\): it binds Roles of the namespace only`),
  );
  await post(operator, `${rbacApi}/namespaces/${preview}/roles`, role('read-config', preview, readConfig));
  const outsiders = [
    { kind: 'ServiceAccount', name: 'controller', namespace: victim },
    { kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' },
  ];
  for (const subject of outsiders) {
    await refusedByPolicy(
      post(operator, rolebindings, binding('outsider', preview, { kind: 'Role', name: 'read-config' }, [subject])),
      /its subjects must be ServiceAccounts of its own namespace/,
    );
  }
  // With the chart's RBAC, the API server's escalation check refuses cluster-admin before admission.
  await assert.rejects(
    post(operator, rolebindings, binding('admin', preview, { kind: 'ClusterRole', name: 'cluster-admin' }, inNamespace)),
    (err: unknown) => err instanceof KubeRequestError && err.statusCode === 403 && /not currently held|escalat/.test(err.message),
  );
});

/** Retries while RBAC (not the policy) refuses: RBAC sees a new binding a moment after it is written. */
async function pastRbac(request: () => Promise<unknown>): Promise<unknown> {
  const outcome = await waitFor(
    'RBAC to let the request reach admission',
    async () => {
      try {
        return { answered: await request() };
      } catch (err) {
        if (err instanceof KubeRequestError && err.statusCode === 403 && !/ValidatingAdmissionPolicy/.test(err.message)) return undefined;
        return { refused: err };
      }
    },
    { timeoutMs: 30_000 },
  );
  if ('refused' in outcome) throw outcome.refused;
  return outcome.answered;
}

test('with its RBAC broadened by mistake (bind, TokenRequest, ClusterRoleBindings), the policy alone still refuses', async () => {
  const broader = `${release}-broader`;
  await applyAsAdmin({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: broader },
    rules: [
      { apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['bind'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterrolebindings'], verbs: ['create'] },
    ],
  });
  await applyAsAdmin({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: broader },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: broader },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
  });
  const clusterAdmin = { kind: 'ClusterRole', name: 'cluster-admin' };
  const subjects = [{ kind: 'ServiceAccount', name: 'default', namespace: preview }];
  const tokenRequest = () => post(operator, `/api/v1/namespaces/${victim}/serviceaccounts/controller/token`, { spec: { audiences: [] } });
  await refusedByPolicy(pastRbac(tokenRequest), /may not request ServiceAccount tokens/);
  const roleBinding = binding('admin', preview, clusterAdmin, subjects);
  await refusedByPolicy(
    pastRbac(() => post(operator, `${rbacApi}/namespaces/${preview}/rolebindings`, roleBinding)),
    /may not bind ClusterRole cluster-admin/,
  );
  const clusterBinding = {
    metadata: { name: `${release}-pwn` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...clusterAdmin },
    subjects,
  };
  await refusedByPolicy(
    pastRbac(() => post(operator, `${rbacApi}/clusterrolebindings`, clusterBinding)),
    /writes no cluster-scoped object but Namespaces and PreviewEnvironments, not clusterrolebindings\.rbac\.authorization\.k8s\.io/,
  );
});

/** The webhook's write and the controller's finalizer; a selector label keeps other files' controllers off it. */
async function writeEnvironment(client: KubeClient, name: string): Promise<KubeObject> {
  const written = environmentObject(name, {
    repository: { owner: 'alien6', name: 'reco', cloneUrl: 'https://github.com/alien6/reco.git' },
    pullRequest: { number: 9, headSha: 'a'.repeat(40), headRef: 'feature', baseRef: 'main', authorAssociation: 'MEMBER' },
  });
  written.metadata.labels = { ...written.metadata.labels, 'e2e.preview.alien6.io/run': release };
  const env = await addFinalizer(client, await client.apply(written), previewEnvironmentFinalizer);
  const path = `/apis/${env.apiVersion}/previewenvironments/${name}`;
  cleanups.push(async () => {
    await kubeRequest(admin, 'PATCH', path, { metadata: { finalizers: null } }, mergePatch);
    await kubeRequest(admin, 'DELETE', path);
  });
  return env;
}

/** The rendering, applied as the controller applies it: the namespace (owned by the environment), then the rest. */
async function applyPreview(applier: Applier, env: KubeObject): Promise<KubeObject[]> {
  const name = env.metadata.name!;
  const [namespaceObject, ...objects] = renderExamplePreview(exampleIdentity(name)) as unknown as KubeObject[];
  assert.equal(namespaceObject!.kind, 'Namespace');
  const owned = { ...namespaceObject!, metadata: { ...namespaceObject!.metadata, ownerReferences: [controllerReference(env)] } };
  await applier.apply([owned], { ownership: { label: ownership, value: name } });
  cleanups.push(() => kubeRequest(admin, 'DELETE', `/api/v1/namespaces/${name}`));
  // The cluster makes the namespace's default ServiceAccount; the operator's apply then patches it (no token automount).
  const defaultAccount = `/api/v1/namespaces/${name}/serviceaccounts/default`;
  await waitFor('the default ServiceAccount', () =>
    kubeRequest(admin, 'GET', defaultAccount).then(
      () => true,
      () => false,
    ),
  );
  const applied = await applier.apply(objects, { ownership: { label: ownership, value: name }, fresh: true });
  const guards = applied
    .map((r) => r.ref.kind)
    .filter((k) => ['ResourceQuota', 'LimitRange', 'NetworkPolicy', 'ServiceAccount'].includes(k));
  assert.deepEqual(guards.sort(), ['LimitRange', 'NetworkPolicy', 'ResourceQuota', 'ServiceAccount']);
  // The namespace's default ServiceAccount (made by the cluster, or by this apply first) is the operator's to patch.
  const account = (await kubeRequest(admin, 'GET', defaultAccount)) as { automountServiceAccountToken?: boolean };
  assert.equal(account.automountServiceAccountToken, false);
  return applied.map((r) => r.object);
}

test('what the operator does is let through: a preview applied, its children, status, finalizers, Events, Lease, teardown', async () => {
  const client = new KubeClient(operator);
  const applier = new Applier(client);
  const warnings: string[] = [];
  const warn = (fields: object, message?: string) => warnings.push(`${message} ${JSON.stringify(fields)}`);
  const logger: Logger = { debug: () => {}, info: () => {}, warn, error: warn };
  const events = new EventRecorder(client, { component: 'preview-operator', logger });

  // Leader election in the release namespace, exactly as the operator runs it.
  let leading = false;
  const timing = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };
  const elector = new LeaderElector(client, { namespace, name: 'preview-operator', ...timing, onStartedLeading: () => (leading = true) });
  elector.start();
  await waitFor('the operator to take the lease', () => leading, { timeoutMs: 15_000 });
  await elector.stop();

  const env = await writeEnvironment(client, uniqueName('pr-9-allowed'));
  const name = env.metadata.name!;
  const objects = await applyPreview(applier, env);

  // The Algorithm and Database controllers' children, status and Events.
  const algorithm = objects.find((o) => o.kind === 'Algorithm')!;
  const database = objects.find((o) => o.kind === 'Database')!;
  const children = [
    ...renderAlgorithmWorkloads(algorithm as never, { ownerReferences: [controllerReference(algorithm)] }),
    ...renderDatabaseWorkloads(database as never, { ownerReferences: [controllerReference(database)] }),
  ] as unknown as KubeObject[];
  const appliedChildren = await applier.apply(children);
  assert.ok(appliedChildren.some((r) => r.ref.kind === 'Deployment') && appliedChildren.some((r) => r.ref.kind === 'StatefulSet'));
  assert.equal(await ensureCredentialsSecret(client, database as never, undefined), true);
  await updateStatus(client, algorithm, { phase: 'Pending', retryCount: 0 });
  await updateStatus(client, env, { phase: 'Deploying', namespace: name });
  // Each twice: the repeat is a merge patch of the first Event's count.
  for (const involved of [algorithm, algorithm, env, env]) await events.record(involved, 'Normal', 'Applied', 'admission policy test');
  assert.deepEqual(warnings, []);
  const recorded = (await kubeRequest(admin, 'GET', `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${name}`)) as {
    items: { count: number }[];
  };
  assert.equal(recorded.items[0]?.count, 2);

  // Hand-made Algorithms' namespaces: the listed one and the one the selector picks.
  for (const ns of [teamNamespace, selectedNamespace]) await applier.apply([configMap('env', ns) as unknown as KubeObject]);

  // Prune and teardown.
  await client.delete(appliedChildren.find((r) => r.ref.kind === 'Deployment')!.ref);
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name });
  await removeFinalizer(client, await client.get(refOf(env)), previewEnvironmentFinalizer);
  await client.delete(refOf(env));
});
