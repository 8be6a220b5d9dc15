// The informer survives the API server going away: after a restart of the apiserver alone it
// resumes and sees every change made while it was disconnected — none lost, none doubled.
// Needs a private cluster, since restarting the shared one would disturb other test files.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster, type Cluster } from '../cluster/start-cluster.js';
import { Informer, KubeClient, type Logger } from '../../src/kube/index.js';
import { waitFor } from '../support/wait.js';

let cluster: Cluster | undefined;
after(() => cluster?.stop());

it('resumes after the apiserver restarts and sees the changes made meanwhile, without duplicate adds', { timeout: 300_000 }, async () => {
  cluster = await startCluster({ log: () => {} });
  const client = new KubeClient(cluster.kubeConfig);
  const ns = 'restart-test';
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const cm = (name: string, v: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, labels: { test: 'restart' } },
    data: { v },
  });
  await client.create(cm('kept', '1'));
  await client.create(cm('changed', '1'));
  await client.create(cm('removed', '1'));

  const log: string[] = [];
  const record = (level: string) => (fields: object, message?: string) => log.push(`${level} ${message} ${JSON.stringify(fields)}`);
  const logger: Logger = { debug: () => {}, info: record('info'), warn: record('warn'), error: record('error') };
  const informer = new Informer(client, { apiVersion: 'v1', kind: 'ConfigMap' }, { namespace: ns, labelSelector: 'test=restart', logger });
  const events: string[] = [];
  informer.addHandler({
    onAdd: (o) => events.push(`add ${o.metadata.name}`),
    onUpdate: (old, o) =>
      events.push(`update ${o.metadata.name} ${(old as { data?: { v?: string } }).data?.v}->${(o as { data?: { v?: string } }).data?.v}`),
    onDelete: (o) => events.push(`delete ${o.metadata.name}`),
  });
  informer.start();
  try {
    await informer.waitForSync();
    assert.deepEqual([...events].sort(), ['add changed', 'add kept', 'add removed']);

    await cluster.restartApiServer();
    // The informer is reconnecting (with backoff) while these land.
    await client.create(cm('created', '1'));
    await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'changed' }, 'merge', { data: { v: '2' } });
    await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'removed' });

    await waitFor(
      'the informer caught up',
      () =>
        informer.get(`${ns}/created`) &&
        !informer.get(`${ns}/removed`) &&
        (informer.get(`${ns}/changed`) as { data?: { v?: string } }).data?.v === '2',
      { timeoutMs: 90_000 },
    );
    // Anything it saw twice would show up now.
    await client.create(cm('after', '1'));
    await waitFor('a later change', () => events.includes('add after'), { timeoutMs: 30_000 });

    assert.deepEqual(events.slice(3).sort(), ['add after', 'add created', 'delete removed', 'update changed 1->2']);
    assert.equal(events.filter((e) => e === 'add kept').length, 1, 'no duplicate add for an object seen before the restart');
    assert.deepEqual(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
      ['after', 'changed', 'created', 'kept'],
    );
    assert.ok(
      log.some((l) => l.startsWith('warn informer: watch failed')),
      `the watch really was cut off:\n${log.join('\n')}`,
    );
    process.stderr.write(`informer log during the restart:\n${log.join('\n')}\n`);
  } finally {
    await informer.stop();
    client.close();
  }
});
