// Events land on the object a user looks at, and repeats are aggregated by count.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventRecorder, ForbiddenError, KubeClient, silentLogger, type KubeObject } from '../../src/kube/index.js';
import { createNamespace, newIdentity, testCluster, uniqueName, type TestCluster } from '../support/test-cluster.js';

let cluster: TestCluster;
let client: KubeClient;
before(async () => {
  cluster = await testCluster();
  client = new KubeClient(cluster.kubeConfig);
});
after(() => client?.close());

interface CoreEvent extends KubeObject {
  count: number;
  reason: string;
  message: string;
  type: string;
  involvedObject: { kind: string; name: string; uid: string };
  source: { component: string };
}

async function eventsFor(namespace: string, uid: string): Promise<CoreEvent[]> {
  const { items } = await client.list<CoreEvent>(
    { apiVersion: 'v1', kind: 'Event' },
    { namespace, fieldSelector: `involvedObject.uid=${uid}` },
  );
  return items;
}

it('an Event recorded twice is one Event with count 2; a different message is another Event', async () => {
  const ns = uniqueName('events');
  await createNamespace(cluster.kubeConfig, ns);
  const me = await newIdentity(cluster, 'kube-events');
  const meClient = new KubeClient(me.kubeConfig);
  const cm = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'subject', namespace: ns } });
  const recorder = new EventRecorder(meClient, { component: 'preview-operator', logger: silentLogger });

  const mark = cluster.audit.mark();
  await recorder.record(cm, 'Warning', 'RenderFailed', '.preview/preview.yaml: spec.replicas must be >= 1');
  await recorder.record(cm, 'Warning', 'RenderFailed', '.preview/preview.yaml: spec.replicas must be >= 1');
  await recorder.record(cm, 'Normal', 'Deployed', 'deployed abc123');
  // A message quoting a repository's text keeps no terminal controls: kubectl prints it as it is.
  await recorder.record(cm, 'Warning', 'ConfigInvalid', 'unknown key "\u001b[2J\u001b]52;c;cHduZWQ=\u0007"');

  const events = await eventsFor(ns, cm.metadata.uid!);
  const failed = events.filter((e) => e.reason === 'RenderFailed');
  assert.equal(failed.length, 1, 'repeats aggregated into one Event');
  assert.equal(failed[0]!.count, 2);
  assert.equal(failed[0]!.type, 'Warning');
  assert.equal(failed[0]!.involvedObject.kind, 'ConfigMap');
  assert.equal(failed[0]!.involvedObject.name, 'subject');
  assert.equal(failed[0]!.source.component, 'preview-operator');
  const deployed = events.filter((e) => e.reason === 'Deployed');
  assert.equal(deployed.length, 1);
  assert.equal(deployed[0]!.count, 1);
  assert.deepEqual(
    events.filter((e) => e.reason === 'ConfigInvalid').map((e) => e.message),
    ['unknown key "[2J]52;c;cHduZWQ="'],
  );

  await cluster.audit.settle();
  const writes = cluster.audit.writes(mark, { user: me.username }).map((e) => e.verb);
  assert.deepEqual(writes, ['create', 'patch', 'create', 'create'], 'the repeat is a patch of the count, not a new Event');
  meClient.close();
});

it('concurrent repeats all count, and events about cluster-scoped objects go to the default namespace', async () => {
  const name = uniqueName('events-ns');
  const namespace = await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const recorder = new EventRecorder(client, { component: 'preview-operator', logger: silentLogger });
  await Promise.all(Array.from({ length: 5 }, () => recorder.record(namespace, 'Normal', 'Created', 'namespace created')));
  const events = await eventsFor('default', namespace.metadata.uid!);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.count, 5);
});

it('in a namespace being deleted, a create is refused as NamespaceTerminating and an Event is dropped without a warning', async () => {
  const ns = uniqueName('events-terminating');
  await createNamespace(cluster.kubeConfig, ns);
  // A finalizer nobody removes keeps the namespace in Terminating for as long as the test needs.
  const held = await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'held', namespace: ns, finalizers: ['example.com/hold'] },
  });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
  const refusal = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late', namespace: ns } }).then(
    () => assert.fail('a create in a terminating namespace was accepted'),
    (err: unknown) => err,
  );
  assert.ok(refusal instanceof ForbiddenError && refusal.namespaceTerminating, String(refusal));

  const warnings: string[] = [];
  const logger = { ...silentLogger, warn: (_fields: object, message?: string) => void warnings.push(message ?? '') };
  const recorder = new EventRecorder(client, { component: 'preview-operator', logger });
  await recorder.record(held, 'Warning', 'ApplyFailed', 'could not apply');
  assert.deepEqual(warnings, [], 'nothing logged for an Event that cannot outlive its namespace');

  // Another refusal is still a warning: only the terminating namespace is expected.
  const missing = { ...held, metadata: { ...held.metadata, namespace: uniqueName('events-no-such-namespace') } };
  await recorder.record(missing, 'Warning', 'ApplyFailed', 'could not apply');
  assert.deepEqual(warnings, ['event: could not record']);
  await client.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'held' }, 'merge', { metadata: { finalizers: null } });
});
