import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeCluster } from '../../test/support/fake-cluster.js';
import { Applier } from './apply.js';
import type { KubeObject } from './kube-object.js';

const ownership = { label: 'preview.alien6.io/environment', value: 'pr-1' };

/** A ConfigMap that counts how often its content (`data`) is read. */
function counted(name: string): { obj: KubeObject; reads: () => number } {
  let reads = 0;
  const data = { key: 'value' };
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' } } as KubeObject;
  Object.defineProperty(obj, 'data', { enumerable: true, get: () => (reads++, data) });
  return { obj, reads: () => reads };
}

describe('Applier', () => {
  it('records the hash it always has (a new hash would re-apply every object once)', () => {
    const applier = new Applier(new FakeCluster().client());
    const obj = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { namespace: 'ns', name: 'web', labels: { b: '2', a: '1' } },
      data: { 'z.txt': 'é', '10': 'x', '9': 'y' },
    };
    assert.equal(applier.manifestHash(obj), '43a737dd62448080acf0bf035239e94f');
  });

  it('prepares an object once for its dry run, its apply and a later check', async () => {
    const once = counted('once');
    await new Applier(new FakeCluster().client()).apply([once.obj], { ownership });

    const cluster = new FakeCluster();
    const applier = new Applier(cluster.client());
    const again = counted('again');
    const live = await applier.dryRunWrites([again.obj], { ownership });
    const [result] = await applier.apply([again.obj], { ownership, live });
    assert.equal(result!.action, 'created');
    assert.equal(again.reads(), once.reads(), 'the dry run and the apply read the object as often as an apply alone');
    assert.equal(applier.isApplied(await cluster.client().get(result!.ref), again.obj, ownership), true);
    assert.equal(again.reads(), once.reads());
  });

  it('prepares it again for another ownership', async () => {
    const cluster = new FakeCluster();
    const applier = new Applier(cluster.client());
    const { obj } = counted('moved');
    await applier.apply([obj], { ownership });
    const [result] = await applier.apply([obj], { ownership: { ...ownership, value: 'pr-2' } });
    assert.equal(result!.action, 'configured');
    assert.equal(result!.object.metadata.labels?.[ownership.label], 'pr-2');
  });

  it('reads its own writes while the cache lags: the same manifest is not applied twice', async () => {
    const cluster = new FakeCluster();
    let seen = '0';
    // A synced cache whose watch has not brought the write yet: it says absent.
    const applier = new Applier(cluster.client(), { lookup: () => 'absent', seen: () => seen });
    const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'ns' }, data: { a: '1' } };
    const mark = cluster.writes.length;
    await applier.apply([config], { ownership });
    const [again] = await applier.apply([config], { ownership });
    assert.equal(again!.action, 'unchanged');
    assert.deepEqual(cluster.writesSince(mark), ['apply ConfigMap web'], 'one write for two applies of one manifest');

    seen = '1000'; // the watch went past the write and the cache still has none: deleted since, so applied again
    const [recreated] = await applier.apply([config], { ownership });
    assert.equal(recreated!.action, 'created');

    const lagging = new Applier(cluster.client(), { lookup: () => 'absent' });
    const before = cluster.writes.length;
    await lagging.apply([config], { ownership });
    await lagging.apply([config], { ownership });
    assert.equal(cluster.writes.length - before, 2, 'without `seen`, a lagging cache costs a second write (the control)');
  });

  it('does not send the unjudged objects to the dry run, yet holds back what depends on them', async () => {
    const cluster = new FakeCluster();
    const applier = new Applier(cluster.client());
    const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: 'ns' } };
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'job', namespace: 'ns' }, spec: { containers: [] } };
    const config = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'ns' }, data: { a: '1' } };
    const mark = cluster.writes.length;
    await applier.dryRunWrites([account, pod, config], { ownership, fresh: true, unjudged: new Set([account]) });
    const dryRuns = cluster.writes.slice(mark).filter((w) => w.dryRun);
    assert.deepEqual(
      dryRuns.map((w) => `${w.kind} ${w.name}`),
      ['ConfigMap web'],
      'the account is not judged, and the Pod running as it waits for its real write, as when the account is judged',
    );
  });
});
