// Server-side apply and prune against the real API server, with every write counted in the
// audit log: an unchanged set costs no write, an edited or deleted object is put back,
// prune deletes exactly what left the set and never what it does not own.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Applier, KubeClient, NotFoundError, type KubeObject } from '../../src/kube/index.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type Identity, type TestCluster } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let me: Identity;
let client: KubeClient;
let admin: KubeClient;
before(async () => {
  cluster = await testCluster();
  me = await newIdentity(cluster, 'kube-apply');
  client = new KubeClient(me.kubeConfig);
  admin = new KubeClient(cluster.kubeConfig, { fieldManager: 'someone-else' });
});
after(() => {
  client?.close();
  admin?.close();
});

const ownership = { label: 'app.kubernetes.io/instance', value: 'set-a' };

/** A client that counts its GETs (the reads the Applier makes before deciding to write). */
class CountingClient extends KubeClient {
  reads = 0;
  override get<T extends KubeObject = KubeObject>(...args: Parameters<KubeClient['get']>): Promise<T> {
    this.reads++;
    return super.get<T>(...args);
  }
}

/** Runs `use` with a client of this file's identity that counts its GETs, closed after. */
async function withCountingClient(use: (counting: CountingClient) => Promise<void>): Promise<void> {
  const counting = new CountingClient(me.kubeConfig);
  try {
    await use(counting);
  } finally {
    counting.close();
  }
}

/** A set with the kinds an environment has, written the way renderers write them (server-side normalisation included). */
function objectSet(ns: string, group: string): KubeObject[] {
  const labels = { app: 'web' };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } },
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
                  status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        ],
      },
    },
    { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns }, spec: { size: 3 } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: ns }, data: { 'app.yaml': 'port: 8080\n' } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns },
      type: 'Opaque',
      stringData: { password: 'not-random-in-a-test' },
    },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'web', namespace: ns } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: 'web',
            containers: [
              {
                name: 'web',
                image: 'registry.example/web:1',
                ports: [{ containerPort: 8080 }],
                env: [
                  { name: 'MODE', value: 'preview' },
                  { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
                ],
                // Normalised by the server to 500m / 128Mi: a value comparison would see a difference forever.
                resources: { requests: { cpu: '0.5', memory: '134217728' }, limits: { 'nvidia.com/gpu': 2 } },
              },
            ],
          },
        },
      },
    },
  ];
}

function writesSince(mark: number) {
  return cluster.audit.writes(mark, { user: me.username }).map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`);
}

describe('apply', () => {
  it('applies a set in dependency order; applying it again makes zero writes', async () => {
    const ns = uniqueName('apply');
    const group = `${uniqueName('g')}.kube-test.io`;
    const applier = new Applier(client);
    const set = objectSet(ns, group);
    const asGiven = structuredClone(set);

    let mark = cluster.audit.mark();
    const first = await applier.apply(set, { ownership });
    // Callers keep and re-apply their rendering: the applier adds labels, the hash and folds
    // the Secret's stringData on its own copies only.
    assert.deepEqual(set, asGiven, 'the objects given are left as they were');
    assert.deepEqual(
      first.map((r) => `${r.ref.kind} ${r.action}`),
      [
        'Namespace created',
        'CustomResourceDefinition created',
        'ServiceAccount created',
        'Secret created',
        'ConfigMap created',
        'Service created',
        'Deployment created',
        'Widget created',
      ],
    );
    await cluster.audit.settle();
    assert.equal(writesSince(mark).length, 8, writesSince(mark).join('\n'));

    // Let the cluster's controllers touch the objects (deployment revision, status, token, …).
    await waitFor('deployment observed', async () => {
      const d = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: ns, name: 'web' });
      return (d.status as { observedGeneration?: number } | undefined)?.observedGeneration === 1;
    });

    mark = cluster.audit.mark();
    const second = await applier.apply(set, { ownership });
    assert.deepEqual(
      second.map((r) => r.action),
      Array(8).fill('unchanged'),
    );
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), [], 'the second apply wrote nothing');

    const widget = await client.get({ apiVersion: `${group}/v1`, kind: 'Widget', namespace: ns, name: 'w' });
    assert.equal(widget.metadata.labels?.[ownership.label], ownership.value, 'the ownership label was added');
    await admin.delete({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name: `widgets.${group}` });
  });

  it('re-applies exactly the objects someone edited or deleted, and the manifests that changed', async () => {
    const ns = uniqueName('drift');
    const applier = new Applier(client);
    const set = objectSet(ns, 'unused.kube-test.io').filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Widget');
    await applier.apply(set, { ownership });

    // Someone else edits a field we manage, removes a label we set, and deletes an object.
    const ref = (kind: string, name: string, apiVersion = 'v1') => ({ apiVersion, kind, namespace: ns, name });
    await admin.patch(ref('ConfigMap', 'config'), 'merge', { data: { 'app.yaml': 'port: 9090\n' } });
    await admin.patch(ref('Deployment', 'web', 'apps/v1'), 'merge', { metadata: { labels: { app: null } } });
    await admin.delete(ref('Service', 'web'));
    // The secret was written as stringData; its data is edited.
    await admin.patch(ref('Secret', 'creds'), 'merge', { data: { password: Buffer.from('guessable').toString('base64') } });
    // Someone else adds a field we do not manage: not our business.
    await admin.patch(ref('ServiceAccount', 'web'), 'merge', { metadata: { annotations: { 'note.example/by': 'admin' } } });

    let mark = cluster.audit.mark();
    const results = await applier.apply(set, { ownership });
    const changed = results.filter((r) => r.action !== 'unchanged').map((r) => `${r.ref.kind} ${r.action}`);
    assert.deepEqual(changed.sort(), ['ConfigMap configured', 'Deployment configured', 'Secret configured', 'Service created']);
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark).sort(), [
      'patch configmaps/config',
      'patch deployments/web',
      'patch secrets/creds',
      'patch services/web',
    ]);
    const secret = await client.get(ref('Secret', 'creds'));
    assert.equal(Buffer.from((secret.data as { password: string }).password, 'base64').toString(), 'not-random-in-a-test');

    // A scale through the scale subresource (kubectl scale, an autoscaler) is an edit too.
    await admin.patch(ref('Deployment', 'web', 'apps/v1'), 'merge', { spec: { replicas: 5 } }, { subresource: 'scale' });
    mark = cluster.audit.mark();
    const rescaled = await applier.apply(set, { ownership });
    assert.deepEqual(
      rescaled.filter((r) => r.action !== 'unchanged').map((r) => r.ref.name),
      ['web'],
    );
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), ['patch deployments/web']);
    const config = await client.get(ref('ConfigMap', 'config'));
    assert.deepEqual(config.data, { 'app.yaml': 'port: 8080\n' }, 'our value is back');
    const deployment = await client.get(ref('Deployment', 'web', 'apps/v1'));
    assert.equal(deployment.metadata.labels?.app, 'web');

    // A changed manifest is applied; the rest is not touched.
    const edited = set.map((o) => (o.kind === 'ConfigMap' ? { ...o, data: { 'app.yaml': 'port: 8081\n' } } : o));
    mark = cluster.audit.mark();
    const third = await applier.apply(edited, { ownership });
    assert.deepEqual(
      third.filter((r) => r.action !== 'unchanged').map((r) => r.ref.name),
      ['config'],
    );
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), ['patch configmaps/config']);

    mark = cluster.audit.mark();
    await applier.apply(edited, { ownership });
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), []);
  });

  it('reads live objects from a cache when given one, and still applies what the cache lacks', async () => {
    const ns = uniqueName('cached');
    await createNamespace(cluster.kubeConfig, ns);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: ns }, data: { a: '1' } };
    const first = await new Applier(client).apply([cm]);
    const cache = new Map([[`${ns}/c`, first[0]!.object]]);
    const applier = new Applier(client, { lookup: (r) => cache.get(`${r.namespace}/${r.name}`) });
    const mark = cluster.audit.mark();
    const again = await applier.apply([cm, { ...cm, metadata: { name: 'd', namespace: ns } }]);
    assert.deepEqual(
      again.map((r) => r.action),
      ['unchanged', 'created'],
    );
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), ['patch configmaps/d']);
  });

  it('a fresh set (its namespace created just now) is applied without reading any object first', async () => {
    const ns = uniqueName('fresh');
    await withCountingClient(async (counting) => {
      const applier = new Applier(counting);
      const [namespace] = await applier.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }]);
      assert.equal(namespace!.action, 'created');
      counting.reads = 0;
      const set = [0, 1, 2].map((n) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `c${n}`, namespace: ns },
        data: { n: String(n) },
      }));
      const results = await applier.apply(set, { fresh: true });
      assert.deepEqual(
        results.map((r) => r.action),
        ['created', 'created', 'created'],
      );
      assert.equal(counting.reads, 0, 'no GET before the applies');
      const again = await applier.apply(set);
      assert.deepEqual(
        again.map((r) => r.action),
        ['unchanged', 'unchanged', 'unchanged'],
      );
      assert.equal(counting.reads, 3, 'without the hint each object is read first (and found unchanged)');
    });
  });

  it('an object its cache knows to be absent is applied without a read; one it does not know is read first', async () => {
    const ns = uniqueName('absent');
    await createNamespace(cluster.kubeConfig, ns);
    await withCountingClient(async (counting) => {
      const known = new Set([`${ns}/known`]);
      const applier = new Applier(counting, { lookup: (r) => (known.has(`${r.namespace}/${r.name}`) ? 'absent' : undefined) });
      const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { a: '1' } });
      const results = await applier.apply([cm('known'), cm('unknown')]);
      assert.deepEqual(
        results.map((r) => r.action),
        ['created', 'created'],
      );
      assert.equal(counting.reads, 1, 'only the object the cache could not answer for is read');
    });
  });

  it('dry run validates on the server and persists nothing', async () => {
    const ns = uniqueName('dry');
    await createNamespace(cluster.kubeConfig, ns);
    const mark = cluster.audit.mark();
    const results = await new Applier(client).apply(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry', namespace: ns }, data: { a: '1' } }],
      { dryRun: true, ownership },
    );
    assert.equal(results[0]!.action, 'created');
    assert.equal((results[0]!.object.metadata.labels ?? {})[ownership.label], ownership.value);
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), []);
    await assert.rejects(client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'dry' }), NotFoundError);
    await assert.rejects(
      new Applier(client).apply(
        [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'bad', namespace: ns }, spec: { replicas: -1 } }],
        { dryRun: true },
      ),
      (err: Error) => err.name === 'InvalidError' && /replicas/.test(err.message),
    );
  });
});

describe('prune', () => {
  it('removes exactly the object that left the desired set, and nothing without the ownership label', async () => {
    const ns = uniqueName('prune');
    const other = uniqueName('prune-other');
    await createNamespace(cluster.kubeConfig, ns);
    await createNamespace(cluster.kubeConfig, other);
    const cm = (name: string, namespace = ns): KubeObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace },
      data: { n: name },
    });
    const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1', namespace: ns }, stringData: { k: 'v' } };
    const applier = new Applier(client);
    await applier.apply([cm('keep'), cm('leaving'), secret], { ownership });

    // Things prune must never touch:
    await admin.create(cm('unlabelled'));
    await admin.create({ ...cm('other-set'), metadata: { name: 'other-set', namespace: ns, labels: { [ownership.label]: 'set-b' } } });
    await admin.create({
      ...cm('elsewhere', other),
      metadata: { name: 'elsewhere', namespace: other, labels: { [ownership.label]: ownership.value } },
    });
    await admin.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'unlisted-kind', namespace: ns, labels: { [ownership.label]: ownership.value } },
      spec: { ports: [{ port: 80 }] },
    });

    const desired = [cm('keep'), secret];
    const kinds = [
      { apiVersion: 'v1', kind: 'ConfigMap' },
      { apiVersion: 'v1', kind: 'Secret' },
    ];
    const dry = await applier.prune({ ownership, keep: desired, kinds, namespaces: [ns], dryRun: true });
    assert.deepEqual(
      dry.map((r) => r.name),
      ['leaving'],
    );

    const mark = cluster.audit.mark();
    const deleted = await applier.prune({ ownership, keep: desired, kinds, namespaces: [ns] });
    assert.deepEqual(deleted, [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'leaving' }]);
    await cluster.audit.settle();
    assert.deepEqual(writesSince(mark), ['delete configmaps/leaving']);

    const left = await client.list({ apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns });
    assert.deepEqual(left.items.map((o) => o.metadata.name).sort(), ['keep', 'kube-root-ca.crt', 'other-set', 'unlabelled']);
    await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: other, name: 'elsewhere' });
    await client.get({ apiVersion: 'v1', kind: 'Service', namespace: ns, name: 'unlisted-kind' });
    await client.get({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 's1' });

    const again = cluster.audit.mark();
    assert.deepEqual(
      await applier.prune({ ownership, keep: desired, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }], namespaces: [ns] }),
      [],
    );
    await cluster.audit.settle();
    assert.deepEqual(writesSince(again), [], 'nothing left to prune: no write');
  });
});
