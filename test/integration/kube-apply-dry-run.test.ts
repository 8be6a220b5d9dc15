// The Applier's dry run of a whole set against the real API server: a set with one object the
// server refuses writes nothing; an accepted set is then applied from the same reads (no second
// GET); and objects whose admission needs another object of the set — a RoleBinding of a new
// Role, for a writer without `bind` — are left to their real write instead of being refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Applier, InvalidError, KubeClient, NotFoundError, type KubeObject } from '../../src/kube/index.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';

let cluster: TestCluster;
let admin: KubeClient;
before(async () => {
  cluster = await testCluster();
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'kube-apply-dry-run-tests' });
});
after(() => admin?.close());

const ownership = { label: 'app.kubernetes.io/instance', value: 'dry-run' };

function writesSince(mark: number, user: string): string[] {
  return cluster.audit
    .writes(mark, { user, excludeDryRun: false })
    .map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}${/[?&]dryRun=/.test(e.requestURI) ? ' (dry run)' : ''}`);
}

async function exists(ref: { apiVersion: string; kind: string; namespace: string; name: string }): Promise<boolean> {
  return admin.get(ref).then(
    () => true,
    (err) => (err instanceof NotFoundError ? false : Promise.reject(err)),
  );
}

/** A client that counts its GETs. */
class CountingClient extends KubeClient {
  reads = 0;
  override get<T extends KubeObject = KubeObject>(...args: Parameters<KubeClient['get']>): Promise<T> {
    this.reads++;
    return super.get<T>(...args);
  }
}

describe('dryRunWrites', () => {
  let me: Identity;
  before(async () => {
    me = await newIdentity(cluster, 'kube-apply-dry-run');
  });

  it('a set with one invalid object (last in apply order) is refused before anything is written', async () => {
    const ns = uniqueName('dry-refused');
    await createNamespace(cluster.kubeConfig, ns);
    const client = new KubeClient(me.kubeConfig);
    try {
      const set: KubeObject[] = [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: ns }, data: { a: '1' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: ns }, spec: { ports: [{ port: 80 }] } },
        // Port 0 passes a schema, not the API server's validation.
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'zzz-broken', namespace: ns }, spec: { ports: [{ port: 0 }] } },
      ];
      const mark = cluster.audit.mark();
      const refused = (err: unknown) => err instanceof InvalidError && /zzz-broken/.test(err.message);
      await assert.rejects(new Applier(client).dryRunWrites(set, { ownership }), refused);
      await cluster.audit.settle();
      assert.deepEqual(
        writesSince(mark, me.username).filter((w) => !w.endsWith('(dry run)')),
        [],
        'no real write',
      );
      assert.equal(await exists({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'settings' }), false);
      assert.equal(await exists({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'web' }), false);
    } finally {
      client.close();
    }
  });

  it('an accepted set is dry-run only where it would write, and applied from the same reads', async () => {
    const ns = uniqueName('dry-accepted');
    await createNamespace(cluster.kubeConfig, ns);
    const client = new CountingClient(me.kubeConfig);
    try {
      const applier = new Applier(client);
      const config = (value: string): KubeObject => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'settings', namespace: ns },
        data: { a: value },
      });
      const account: KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: ns } };
      await applier.apply([config('1'), account], { ownership });

      const set = [config('2'), account];
      const mark = cluster.audit.mark();
      client.reads = 0;
      const live = await applier.dryRunWrites(set, { ownership });
      const results = await applier.apply(set, { ownership, live });
      assert.equal(client.reads, 2, 'each object read once, by the dry run');
      assert.deepEqual(
        results.map((r) => `${r.ref.kind} ${r.action}`),
        ['ServiceAccount unchanged', 'ConfigMap configured'],
      );
      await cluster.audit.settle();
      assert.deepEqual(writesSince(mark, me.username), ['patch configmaps/settings (dry run)', 'patch configmaps/settings']);
    } finally {
      client.close();
    }
  });

  it('a RoleBinding of a Role the set creates is left to its real write, for a writer without bind', async () => {
    const ns = uniqueName('dry-rbac');
    await createNamespace(cluster.kubeConfig, ns);
    // What the operator's ClusterRole allows: the Role's own rules and writing Roles, no `bind`, no `escalate`.
    const clusterRole = uniqueName('dry-run-writer');
    await admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: clusterRole },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['get', 'create', 'patch', 'update'] },
      ],
    });
    const writer = await newIdentity(cluster, 'dry-run-writer', clusterRole);
    const client = new KubeClient(writer.kubeConfig);
    try {
      const role: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader', namespace: ns },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      };
      const binding: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'reader', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: ns }],
      };
      // Why it is left out: dry-run alone, the binding is refused for want of its Role.
      await assert.rejects(client.apply(binding, { force: true, dryRun: true }), NotFoundError);

      const applier = new Applier(client);
      const live = await applier.dryRunWrites([role, binding], { ownership });
      const results = await applier.apply([role, binding], { ownership, live });
      assert.deepEqual(
        results.map((r) => `${r.ref.kind} ${r.action}`),
        ['Role created', 'RoleBinding created'],
      );
    } finally {
      client.close();
      await admin.delete({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: clusterRole });
    }
  });
});

describe('apply with undoCreated', () => {
  it('a write refused part-way (what the dry run could not judge) leaves no object it created; one it changed stays', async () => {
    const ns = uniqueName('undo-created');
    await createNamespace(cluster.kubeConfig, ns);
    const me = await newIdentity(cluster, 'kube-apply-undo');
    const client = new KubeClient(me.kubeConfig);
    try {
      const applier = new Applier(client);
      const config = (name: string, value: string): KubeObject => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns },
        data: { a: value },
      });
      await applier.apply([config('existing', '1')], { ownership });
      const role: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'reader', namespace: ns },
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
      };
      // A RoleBinding of a Role the set creates is not dry-run; its invalid subject is refused at its real write, after the rest.
      const binding: KubeObject = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'reader', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'default', apiGroup: 'rbac.authorization.k8s.io' }],
      };
      const set = [config('existing', '2'), config('half-applied', '2'), role, binding];
      const live = await applier.dryRunWrites(set, { ownership });
      await assert.rejects(applier.apply(set, { ownership, live, undoCreated: true }), InvalidError);
      assert.equal(await exists({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'half-applied' }), false);
      assert.equal(await exists({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: ns, name: 'reader' }), false);
      const existing = await admin.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'existing' });
      assert.deepEqual(existing.data, { a: '2' }, 'what existed before is changed, not deleted');

      // Without the option, what came before the refusal stays (the old behaviour, for callers that want it).
      await assert.rejects(applier.apply(set, { ownership }), InvalidError);
      assert.equal(await exists({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', namespace: ns, name: 'reader' }), true);
    } finally {
      client.close();
    }
  });
});
