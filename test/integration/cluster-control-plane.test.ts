// The local control plane behaves like a real cluster in the ways the operator relies on.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  KubeConfig,
  type V1Deployment,
  type V1StatefulSet,
} from '@kubernetes/client-node';
import { createNamespace, newIdentity, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';

const labels = { app: 'web' };
const restrictedContainer = {
  name: 'web',
  image: 'registry.example/web:1',
  securityContext: {
    runAsNonRoot: true,
    runAsUser: 1000,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  },
};

let cluster: TestCluster;
let core: CoreV1Api;
let apps: AppsV1Api;
before(async () => {
  cluster = await testCluster();
  core = cluster.kubeConfig.makeApiClient(CoreV1Api);
  apps = cluster.kubeConfig.makeApiClient(AppsV1Api);
});

function deployment(name: string, replicas: number): V1Deployment {
  return {
    metadata: { name },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [restrictedContainer] } } },
  };
}

describe('workloads', () => {
  it('a Deployment becomes Available: ReplicaSet, scheduled pods, Ready', async () => {
    const ns = uniqueName('deploy');
    await createNamespace(cluster.kubeConfig, ns);
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('web', 3) });
    const ready = await waitFor('deployment available', async () => {
      const d = await apps.readNamespacedDeployment({ namespace: ns, name: 'web' });
      const available = d.status?.conditions?.find((c) => c.type === 'Available')?.status === 'True';
      return available && d.status?.readyReplicas === 3 ? d : undefined;
    });
    assert.equal(ready.status?.availableReplicas, 3);
    const replicaSets = await apps.listNamespacedReplicaSet({ namespace: ns });
    assert.equal(replicaSets.items.length, 1, 'the deployment controller created one ReplicaSet');
    const pods = await core.listNamespacedPod({ namespace: ns });
    assert.equal(pods.items.length, 3);
    for (const pod of pods.items) {
      assert.match(pod.spec?.nodeName ?? '', /^sim-node-/, 'scheduled by the scheduler');
      assert.equal(pod.status?.phase, 'Running');
      assert.ok(pod.status?.podIP, 'has a pod IP');
      assert.equal(pod.status?.containerStatuses?.[0]?.ready, true);
    }
  });

  it('a StatefulSet with volumeClaimTemplates reaches all replicas Ready with bound claims', async () => {
    const ns = uniqueName('sts');
    await createNamespace(cluster.kubeConfig, ns);
    const sts: V1StatefulSet = {
      metadata: { name: 'db' },
      spec: {
        serviceName: 'db',
        replicas: 2,
        selector: { matchLabels: { app: 'db' } },
        template: {
          metadata: { labels: { app: 'db' } },
          spec: { containers: [{ ...restrictedContainer, name: 'db', volumeMounts: [{ name: 'data', mountPath: '/data' }] }] },
        },
        volumeClaimTemplates: [
          { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
        ],
      },
    };
    await apps.createNamespacedStatefulSet({ namespace: ns, body: sts });
    await waitFor(
      'statefulset ready',
      async () => {
        const s = await apps.readNamespacedStatefulSet({ namespace: ns, name: 'db' });
        return s.status?.readyReplicas === 2 || undefined;
      },
      { timeoutMs: 90_000 },
    );
    const claims = await core.listNamespacedPersistentVolumeClaim({ namespace: ns });
    assert.deepEqual(claims.items.map((c) => [c.metadata?.name, c.status?.phase]).sort(), [
      ['data-db-0', 'Bound'],
      ['data-db-1', 'Bound'],
    ]);
  });

  it('deleting a namespace that holds workloads completes', async () => {
    const ns = uniqueName('gone');
    await createNamespace(cluster.kubeConfig, ns);
    await apps.createNamespacedDeployment({ namespace: ns, body: deployment('web', 2) });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { selector: labels, ports: [{ port: 80 }] } },
    });
    await waitFor(
      'pods running',
      async () =>
        (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running').length === 2 || undefined,
    );
    await core.deleteNamespace({ name: ns });
    await waitFor(
      'namespace gone',
      async () => {
        try {
          await core.readNamespace({ name: ns });
          return undefined;
        } catch (err) {
          return (err as { code?: number }).code === 404 || undefined;
        }
      },
      { timeoutMs: 90_000 },
    );
  });
});

describe('API machinery', () => {
  it('serves a CRD with a CEL rule and rejects an object that breaks it, with the API server message', async () => {
    const group = `${uniqueName('cel')}.kube-local.test`;
    const ext = cluster.kubeConfig.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `ranges.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'ranges', singular: 'range', kind: 'Range' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: 'object',
                  properties: {
                    spec: {
                      type: 'object',
                      properties: { min: { type: 'integer' }, max: { type: 'integer' } },
                      x_kubernetes_validations: [{ rule: 'self.min <= self.max', message: 'min must not exceed max', fieldPath: '.min' }],
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await waitFor('CRD established', async () => {
      const crd = await ext.readCustomResourceDefinition({ name: `ranges.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
    });
    const ns = uniqueName('cel');
    await createNamespace(cluster.kubeConfig, ns);
    const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const create = (name: string, spec: object) =>
      custom.createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: ns,
        plural: 'ranges',
        body: { apiVersion: `${group}/v1`, kind: 'Range', metadata: { name }, spec },
      });
    // The discovery of a new group can lag the Established condition by a moment.
    await waitFor('valid object accepted', async () => (await create('ok', { min: 1, max: 2 }), true));
    await assert.rejects(create('bad', { min: 5, max: 2 }), (err: { code?: number; body?: string }) => {
      assert.equal(err.code, 422);
      assert.match(String(err.body), /min must not exceed max/);
      assert.match(String(err.body), /spec\.min/);
      return true;
    });
  });

  it('a ServiceAccount token is denied without a binding and allowed with one', async () => {
    const ns = uniqueName('rbac');
    await createNamespace(cluster.kubeConfig, ns);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'reader' } } });
    const token = await core.createNamespacedServiceAccountToken({ namespace: ns, name: 'reader', body: { spec: { audiences: [] } } });
    const asReader = new KubeConfig();
    asReader.loadFromString(kubeconfigYaml(cluster.server, cluster.kubeConfig.getCurrentCluster()!.caFile!, token.status!.token, 'reader'));
    const readerCore = asReader.makeApiClient(CoreV1Api);
    await assert.rejects(readerCore.listNamespace(), (err: { code?: number; body?: string }) => {
      assert.equal(err.code, 403);
      assert.match(String(err.body), new RegExp(`system:serviceaccount:${ns}:reader`));
      return true;
    });
    const rbac = cluster.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: { metadata: { name: `${ns}-ns-reader` }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }] },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `${ns}-ns-reader` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-ns-reader` },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
      },
    });
    const list = await waitFor('binding effective', async () => readerCore.listNamespace());
    assert.ok(list.items.some((n) => n.metadata?.name === ns));
  });

  it('Pod Security admission: a restricted namespace rejects a privileged pod', async () => {
    const ns = uniqueName('psa');
    await createNamespace(cluster.kubeConfig, ns, { 'pod-security.kubernetes.io/enforce': 'restricted' });
    await assert.rejects(
      core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'root' },
          spec: { containers: [{ name: 'c', image: 'busybox', securityContext: { privileged: true } }] },
        },
      }),
      (err: { code?: number; body?: string }) => {
        assert.equal(err.code, 403);
        const message = (JSON.parse(String(err.body)) as { message: string }).message;
        assert.match(message, /violates PodSecurity "restricted:latest"/);
        assert.match(message, /must not set securityContext\.privileged=true/);
        return true;
      },
    );
    // The same namespace admits a pod that meets the profile.
    await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'ok' }, spec: { containers: [restrictedContainer] } } });
  });

  it('the audit log shows exactly the writes a test made', async () => {
    const me = await newIdentity(cluster, 'audit');
    const ns = uniqueName('audit');
    await createNamespace(cluster.kubeConfig, ns);
    const mark = cluster.audit.mark();
    const myCore = me.kubeConfig.makeApiClient(CoreV1Api);
    await myCore.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'settings' }, data: { a: '1' } } });
    await myCore.readNamespacedConfigMap({ namespace: ns, name: 'settings' });
    await myCore.patchNamespacedConfigMap(
      { namespace: ns, name: 'settings', body: { data: { a: '2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await cluster.audit.settle();
    const writes = cluster.audit.writes(mark, { user: me.username });
    assert.deepEqual(
      writes.map((w) => [w.verb, w.objectRef?.resource, w.objectRef?.namespace, w.objectRef?.name]),
      [
        ['create', 'configmaps', ns, 'settings'],
        ['patch', 'configmaps', ns, 'settings'],
      ],
    );
  });
});
