// The informer against the real API server: it sees adds, updates and deletes, honours its
// label selector and keeps its indexes in step.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeConfig } from '@kubernetes/client-node';
import { Applier, Informer, KubeClient, silentLogger, type KubeObject, type Logger } from '../../src/kube/index.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import { createNamespace, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';
import { tcpRelay } from '../support/tcp-relay.js';
import { waitFor } from '../support/wait.js';

let cluster: TestCluster;
let client: KubeClient;
before(async () => {
  cluster = await testCluster();
  client = new KubeClient(cluster.kubeConfig);
});
after(() => client?.close());

const configMapKind = { apiVersion: 'v1', kind: 'ConfigMap' };

function configMap(namespace: string, name: string, data: Record<string, string>, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
}

/** Records handler calls as readable strings. */
function recorder(informer: Informer) {
  const events: string[] = [];
  informer.addHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}`),
    onUpdate: (old, o) =>
      events.push(
        `update ${o.metadata.name} ${JSON.stringify((old as { data?: unknown }).data)}->${JSON.stringify((o as { data?: unknown }).data)}`,
      ),
    onDelete: (o) => events.push(`delete ${o.metadata.name}`),
  });
  return events;
}

describe('informer', () => {
  it('lists, then sees add, update (with old and new) and delete', async () => {
    const ns = uniqueName('inf');
    await createNamespace(cluster.kubeConfig, ns);
    await client.create(configMap(ns, 'before', { v: '0' }));
    const informer = new Informer(client, configMapKind, { namespace: ns, logger: silentLogger });
    const events = recorder(informer);
    informer.start();
    try {
      await informer.waitForSync();
      assert.ok(informer.hasSynced());
      // kube-root-ca.crt is created in every namespace by the controller manager.
      await waitFor('initial list delivered', () => events.includes('add before'));

      await client.create(configMap(ns, 'a', { v: '1' }));
      await waitFor('add a', () => events.includes('add a'));
      await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'a' }, 'merge', { data: { v: '2' } });
      await waitFor('update a', () => events.includes('update a {"v":"1"}->{"v":"2"}'));
      await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'a' });
      await waitFor('delete a', () => events.includes('delete a'));

      assert.equal(informer.get(`${ns}/a`), undefined);
      assert.deepEqual((informer.get(`${ns}/before`) as { data?: unknown }).data, { v: '0' });
      const mine = events.filter((e) => / (a|before)( |$)/.test(e));
      assert.deepEqual(mine, ['add before', 'add a', 'update a {"v":"1"}->{"v":"2"}', 'delete a']);
    } finally {
      await informer.stop();
    }
  });

  it('with a label selector sees only matching objects; indexes by label and owner follow changes', async () => {
    const ns = uniqueName('inf-sel');
    await createNamespace(cluster.kubeConfig, ns);
    const informer = new Informer(client, configMapKind, { namespace: ns, labelSelector: 'team=blue', logger: silentLogger });
    const events = recorder(informer);
    informer.start();
    try {
      await informer.waitForSync();
      const owner = await client.create(configMap(ns, 'owner', {}));
      const ownerRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid!, controller: true };
      await client.create(configMap(ns, 'blue', { v: '1' }, { team: 'blue', tier: 'web' }));
      await client.create(configMap(ns, 'red', { v: '1' }, { team: 'red' }));
      await client.create({
        ...configMap(ns, 'owned', {}, { team: 'blue', tier: 'db' }),
        metadata: { name: 'owned', namespace: ns, labels: { team: 'blue', tier: 'db' }, ownerReferences: [ownerRef] },
      });
      await waitFor('both blue objects', () => informer.list().length === 2);
      assert.deepEqual(
        informer
          .list(ns)
          .map((o) => o.metadata.name)
          .sort(),
        ['blue', 'owned'],
      );
      assert.deepEqual(
        informer.byLabel('tier', 'web').map((o) => o.metadata.name),
        ['blue'],
      );
      assert.deepEqual(
        informer.byOwner(owner.metadata.uid!).map((o) => o.metadata.name),
        ['owned'],
      );

      await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'blue' }, 'merge', {
        metadata: { labels: { tier: 'cache' } },
      });
      await waitFor('label index updated', () => informer.byLabel('tier', 'cache').length === 1);
      assert.deepEqual(informer.byLabel('tier', 'web'), []);

      // Leaving the selector looks like a delete to the informer.
      await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'blue' }, 'merge', {
        metadata: { labels: { team: 'red' } },
      });
      await waitFor('blue left the selection', () => events.includes('delete blue'));
      assert.ok(!events.some((e) => e.includes('red')), `never saw the red object: ${events.join(', ')}`);
    } finally {
      await informer.stop();
    }
  });

  it('relists periodically without repeating events for unchanged objects', async () => {
    const ns = uniqueName('inf-relist');
    await createNamespace(cluster.kubeConfig, ns);
    await client.create(configMap(ns, 'x', { v: '1' }));
    const informer = new Informer(client, configMapKind, { namespace: ns, relistIntervalMs: 300, logger: silentLogger });
    const events = recorder(informer);
    informer.start();
    try {
      await informer.waitForSync();
      await new Promise((r) => setTimeout(r, 1500));
      await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'x' }, 'merge', { data: { v: '2' } });
      await waitFor('update x', () => events.includes('update x {"v":"1"}->{"v":"2"}'));
      await new Promise((r) => setTimeout(r, 700));
      assert.deepEqual(
        events.filter((e) => e.includes(' x')),
        ['add x', 'update x {"v":"1"}->{"v":"2"}'],
      );
    } finally {
      await informer.stop();
    }
  });

  it("caches the client's Apply entry whole and only the top two levels of other managers' fields", async () => {
    const ns = uniqueName('inf-fields');
    await createNamespace(cluster.kubeConfig, ns);
    const applier = new Applier(client);
    const desired = (name: string) => configMap(ns, name, { v: '1' }, { app: 'web' });
    const labelledByOthers = async (name: string) => {
      await applier.apply([desired(name)]);
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name };
      await client.patch(ref, 'merge', { metadata: { labels: { team: 'blue' } } }, { fieldManager: 'someone-else' });
      return client.get(ref);
    };
    const listed = await labelledByOthers('listed');
    const informer = new Informer(client, configMapKind, { namespace: ns, logger: silentLogger });
    informer.start();
    try {
      await informer.waitForSync();
      const watched = await labelledByOthers('watched');
      await waitFor('watched', () => informer.get(`${ns}/watched`)?.metadata.resourceVersion === watched.metadata.resourceVersion);
      for (const live of [listed, watched]) {
        const cached = informer.get(`${ns}/${live.metadata.name}`)!;
        const entries = live.metadata.managedFields!;
        const ours = entries.find((e) => e.manager === 'preview-operator' && e.operation === 'Apply');
        const theirs = entries.find((e) => e.manager === 'someone-else')!;
        assert.deepEqual(theirs.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:team': {} } } }, 'as the server records it');
        assert.deepEqual(cached.metadata.managedFields, [ours, { ...theirs, fieldsV1: { 'f:metadata': { 'f:labels': {} } } }]);
        assert.equal(applier.isApplied(cached, desired(live.metadata.name)), true, 'the unchanged check reads the cached object as before');
      }
    } finally {
      await informer.stop();
    }
  });
});

describe('informer watchdog', () => {
  it('restarts a watch whose connection went silent, and sees what changed meanwhile', async () => {
    const ns = uniqueName('inf-dog');
    await createNamespace(cluster.kubeConfig, ns);
    const relay = await tcpRelay(cluster.server);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfigYaml(relay.url, cluster.kubeConfig.getCurrentCluster()!.caFile!, cluster.token));
    const relayed = new KubeClient(kc, { requestTimeoutMs: 3000 });
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (f) => warnings.push((f as { err?: string }).err ?? '') };
    const informer = new Informer(relayed, configMapKind, { namespace: ns, watchdogMs: 1500, logger });
    const events = recorder(informer);
    informer.start();
    try {
      await informer.waitForSync();
      await client.create(configMap(ns, 'a', {}));
      await waitFor('add a', () => events.includes('add a'));

      relay.freeze();
      await client.create(configMap(ns, 'b', {}));
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(!events.includes('add b'), 'the frozen watch delivers nothing');
      await waitFor('add b, after the watchdog restarted the watch', () => events.includes('add b'), { timeoutMs: 20_000 });
      assert.ok(
        warnings.some((w) => /silent for 1500 ms/.test(w)),
        warnings.join('\n'),
      );
      assert.equal(events.filter((e) => e === 'add a').length, 1);
    } finally {
      await informer.stop();
      relayed.close();
      relay.close();
    }
  });
});
