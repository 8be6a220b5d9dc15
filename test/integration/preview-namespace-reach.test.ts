// A preview's workloads against their own namespace, as the second review of issue 19 attacked
// them: pods that do not mention `automountServiceAccountToken` got the default ServiceAccount's
// token; a rendered Role on `namespaces` (a request for the Namespace is authorised by the
// RoleBindings inside it) let that ServiceAccount lift Pod Security and drop the ownership label;
// a Namespace label or the default ServiceAccount changed by someone else stayed changed while a
// push was refused; a rendering the API server refused only at a real write (what the dry run
// cannot judge) left the objects written before it. Each, as the attacker wrote it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ForbiddenError, KubeClient, NotFoundError, type KubeObject, type ObjectRef } from '../../src/kube/index.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  namesOf,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

let operator: PreviewOperator;
let repository: GitRepository;

before(async () => {
  operator = await startPreviewOperator({ progressIntervalMs: 0, tlsIssuer: false });
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }) });
});
after(async () => {
  await operator?.stop();
  await repository?.cleanup();
});

const condition = (env: EnvironmentObject, type: string) => env.status?.conditions?.find((c) => c.type === type);
const defaultAccount = (namespace: string): ObjectRef => ({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: 'default' });

/** A Deployment whose pods say nothing about tokens or ServiceAccounts (restricted-compliant). */
const deployment = (image: string) => `
  new kplus.k8s.KubeDeployment(chart, 'web', { metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, template: {
    metadata: { labels: { app: 'web' } },
    spec: { securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{ name: 'web', image: '${image}', securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] } } } });`;
const mainTs = (body: string) => `
  import { kplus, type PreviewEnvironmentChart } from 'preview-operator/constructs';
  export default function (chart: PreviewEnvironmentChart): void { ${body} }`;

async function deployed(pullRequest: number): Promise<{ name: string; headSha: string }> {
  const headSha = await repository.openPullRequest(pullRequest, {
    headBranch: `feature-${pullRequest}`,
    files: { '.preview/main.ts': mainTs(deployment('registry.example.com/web:1')) },
  });
  const name = await applyEnvironment(operator, { repository, pullRequest, headSha });
  await waitForEnvironment(operator, name, 'deployed', (e) => e.status?.deployedSha === headSha, 120_000);
  return { name, headSha };
}

async function push(pullRequest: number, body: string): Promise<string> {
  const sha = await repository.pushToPullRequest(pullRequest, { '.preview/main.ts': mainTs(body) });
  await applyEnvironment(operator, { repository, pullRequest, headSha: sha });
  return sha;
}

async function getOrUndefined(ref: ObjectRef): Promise<KubeObject | undefined> {
  return operator.admin.get(ref).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
}

/** A client acting as the namespace's `default` ServiceAccount (what a pod with its token could do). */
async function asDefaultServiceAccount(namespace: string): Promise<KubeClient> {
  const answer = await operator.admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/default/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kubeConfig = new KubeConfig();
  const caFile = operator.cluster.kubeConfig.getCurrentCluster()!.caFile!;
  kubeConfig.loadFromString(kubeconfigYaml(operator.cluster.server, caFile, answer.status.token, 'default'));
  return new KubeClient(kubeConfig, { fieldManager: 'preview-workload' });
}

describe('a preview against its own namespace', () => {
  it('pods that do not mention automountServiceAccountToken get no API token', async () => {
    const { name } = await deployed(1);
    const pods = await waitFor(
      'a pod of web',
      async () => {
        const { items } = await operator.admin.list<KubeObject>({ apiVersion: 'v1', kind: 'Pod' }, { namespace: name });
        return items.length > 0 ? items : undefined;
      },
      { timeoutMs: 30_000 },
    );
    type Volume = { name: string; projected?: { sources?: { serviceAccountToken?: unknown }[] } };
    type Container = { volumeMounts?: { mountPath: string }[] };
    const spec = pods[0]!.spec as { serviceAccountName?: string; volumes?: Volume[]; containers: Container[] };
    assert.equal(spec.serviceAccountName, 'default');
    const tokens = (spec.volumes ?? []).filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken !== undefined));
    assert.deepEqual(
      tokens.map((v) => v.name),
      [],
      'no projected token volume',
    );
    const mounts = spec.containers.flatMap((c) => c.volumeMounts ?? []).map((m) => m.mountPath);
    assert.ok(!mounts.includes('/var/run/secrets/kubernetes.io/serviceaccount'), mounts.join(', '));
    const account = await operator.admin.get(defaultAccount(name));
    assert.equal(account.automountServiceAccountToken, false, 'the operator applied the default ServiceAccount');
  });

  it('a Role on namespaces is refused; the Namespace and the default ServiceAccount, changed by someone else, are put back', async () => {
    const { name, headSha } = await deployed(2);
    // The attacker's rendering: the namespace's default ServiceAccount may get and patch its own Namespace.
    await push(
      2,
      `
      new kplus.k8s.KubeRole(chart, 'ns-admin', { metadata: { name: 'ns-admin' },
        rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'patch'] }] });
      new kplus.k8s.KubeRoleBinding(chart, 'ns-admin-binding', { metadata: { name: 'ns-admin' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ns-admin' }, subjects: [{ kind: 'ServiceAccount', name: 'default' }] });
      ${deployment('registry.example.com/web:2')}`,
    );
    const refused = await waitForEnvironment(
      operator,
      name,
      'the push refused',
      (e) => e.status?.phase === 'Failed' && condition(e, 'PolicyCompliant')?.status === 'False',
      120_000,
    );
    const policy = condition(refused, 'PolicyCompliant')!;
    assert.equal(policy.reason, 'PolicyViolation', policy.message);
    assert.match(
      policy.message,
      /Role\.rbac\.authorization\.k8s\.io \S*ns-admin: rules\[0\] grants access to namespaces.*\[rbac-guard-resource\]/,
    );
    assert.equal(refused.status?.deployedSha, headSha);
    assert.deepEqual(await namesOf(operator, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' }, name), []);

    const namespaceRef: ObjectRef = { apiVersion: 'v1', kind: 'Namespace', name };
    const lift = { metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'privileged', 'preview.alien6.io/environment': null } } };
    const workload = await asDefaultServiceAccount(name);
    try {
      await assert.rejects(workload.patch(namespaceRef, 'merge', lift), ForbiddenError, 'the workload cannot touch its Namespace');
    } finally {
      workload.close();
    }

    // Someone else (an admin's mistake, a leftover Role) lifts them anyway, while the push stays refused.
    const lifted = performance.now();
    await operator.admin.patch(namespaceRef, 'merge', lift);
    await operator.admin.patch(defaultAccount(name), 'merge', { automountServiceAccountToken: true });
    await waitFor(
      "the Namespace's labels and the default ServiceAccount put back",
      async () => {
        const [namespace, account] = await Promise.all([getOrUndefined(namespaceRef), getOrUndefined(defaultAccount(name))]);
        const labels = namespace?.metadata.labels ?? {};
        return (
          labels['pod-security.kubernetes.io/enforce'] === 'restricted' &&
          labels['preview.alien6.io/environment'] === name &&
          account?.automountServiceAccountToken === false
        );
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    process.stderr.write(
      `Namespace labels and default ServiceAccount put back ${(performance.now() - lifted).toFixed(0)} ms after they were changed\n`,
    );
    const still = await waitForEnvironment(operator, name, 'still refused', (e) => e.status?.phase === 'Failed');
    assert.equal(still.status?.deployedSha, headSha, 'what served keeps serving');
  });

  it('a rendering refused only at a real write leaves none of the objects it created', async () => {
    const { name } = await deployed(3);
    const configMaps = () => namesOf(operator, { apiVersion: 'v1', kind: 'ConfigMap' }, name);
    const roles = () => namesOf(operator, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role' }, name);
    const image = async () => {
      const web = await operator.admin.get<KubeObject>({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: name, name: 'web' });
      return (web.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image;
    };
    const before = await configMaps();

    // The review's proof of concept: a RoleBinding of a new Role (never dry-run) whose ServiceAccount subject has an apiGroup.
    await push(
      3,
      `
      new kplus.k8s.KubeConfigMap(chart, 'half', { metadata: { name: 'half-applied' }, data: { from: 'the refused push' } });
      new kplus.k8s.KubeRole(chart, 'role', { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
      new kplus.k8s.KubeRoleBinding(chart, 'binding', { metadata: { name: 'reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'default', apiGroup: 'rbac.authorization.k8s.io' }] });
      ${deployment('registry.example.com/web:2')}`,
    );
    const guarded = await waitForEnvironment(
      operator,
      name,
      'the bad binding refused',
      (e) => e.status?.phase === 'Failed' && condition(e, 'PolicyCompliant')?.status === 'False',
      120_000,
    );
    assert.match(
      condition(guarded, 'PolicyCompliant')!.message,
      /RoleBinding\.rbac\.authorization\.k8s\.io \S*reader: subjects\[0\]\.apiGroup .*\[invalid-field\]/,
    );
    assert.deepEqual([await configMaps(), await roles(), await image()], [before, [], 'registry.example.com/web:1']);

    // What the guard does not check: a Pod of a new ServiceAccount (never dry-run) with a field the API server refuses.
    await push(
      3,
      `
      new kplus.k8s.KubeConfigMap(chart, 'half', { metadata: { name: 'half-applied' }, data: { from: 'the refused push' } });
      new kplus.k8s.KubeServiceAccount(chart, 'runner', { metadata: { name: 'runner' }, automountServiceAccountToken: false });
      new kplus.k8s.KubeRole(chart, 'role', { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
      new kplus.k8s.KubeRoleBinding(chart, 'binding', { metadata: { name: 'reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'runner' }] });
      new kplus.k8s.KubePod(chart, 'once', { metadata: { name: 'once' }, spec: { serviceAccountName: 'runner', activeDeadlineSeconds: 0,
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [{ name: 'once', image: 'registry.example.com/once:1',
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } }] } });
      ${deployment('registry.example.com/web:3')}`,
    );
    const rejected = await waitForEnvironment(
      operator,
      name,
      'the pod refused at its write',
      (e) => e.status?.phase === 'Failed' && condition(e, 'PolicyCompliant')?.reason === 'ApplyRejected',
      120_000,
    );
    assert.match(condition(rejected, 'PolicyCompliant')!.message, /activeDeadlineSeconds.*what it created was deleted again/);
    const accounts = await namesOf(operator, { apiVersion: 'v1', kind: 'ServiceAccount' }, name);
    const bindings = await namesOf(operator, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding' }, name);
    assert.deepEqual(
      [await configMaps(), await roles(), bindings, accounts, await image()],
      [before, [], [], ['default'], 'registry.example.com/web:1'],
    );
  });
});
