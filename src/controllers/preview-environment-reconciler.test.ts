// The PreviewEnvironment reconciler without a cluster, git or GitHub: fake informers and an
// in-memory API server (test/support/fake-cluster.ts), `.preview/` files in memory
// (test/support/fake-preview-environment.ts), the recording reporter, and a clock the test moves.
// The integration tests (test/integration/preview-*.test.ts) keep what needs the real parts:
// admission and quotas, the garbage collector, the sandbox, the watches that wake a reconcile.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { algorithmKind, databaseKind, previewEnvironmentKind } from '../../constructs/index.js';
import type { ChecksVerdict } from '../github/checks-gate.js';
import { FakeClock, silentLogger, type KubeObject, type ObjectRef } from '../kube/index.js';
import { defaultPolicySettings } from '../policy/policy-config.js';
import { FakeCluster, fail, type FakeInformer } from '../../test/support/fake-cluster.js';
import { FakePreviewFiles, fakeEnvironmentInformers } from '../../test/support/fake-preview-environment.js';
import { previewYaml } from '../../test/support/preview-yaml.js';
import { RecordingReporter } from '../../test/support/recording-reporter.js';
import type { PreviewEnvironmentControllerOptions } from './preview-environment-options.js';
import { PreviewEnvironmentReconciler } from './preview-environment-reconciler.js';
import type { EnvironmentObject } from './preview-environment-status.js';
import { previewEnvironmentFinalizer } from './preview-environment-teardown.js';

const repository = { owner: 'octo-org', repo: 'shop' };
const github = { owner: repository.owner, name: repository.repo };
const first = '1'.repeat(40);
const second = '2'.repeat(40);
const hour = 3600_000;

type Options = Partial<PreviewEnvironmentControllerOptions>;

/**
 * A reconciler over a fake cluster without cert-manager (served over HTTP), `.preview/` at `first` and on main.
 * Deploying is written at once (deployingReportDelayMs 0) unless a test asks for the wait.
 */
function setup(options: Options = {}) {
  const clock = new FakeClock(Date.parse('2026-03-01T10:00:00Z'));
  const cluster = new FakeCluster(() => new Date(clock.now()));
  cluster.unserved.add('cert-manager.io/v1/Certificate');
  const files = new FakePreviewFiles();
  files.commit(repository, first, { '.preview/preview.yaml': previewYaml() });
  files.branch(repository, 'main', first);
  const reporter = new RecordingReporter();
  const informers = fakeEnvironmentInformers(cluster);
  const settings = {
    reporter,
    repositories: files,
    domain: 'preview.test',
    logger: silentLogger,
    clock,
    deployingReportDelayMs: 0,
    ...options,
  };
  let reconciler = new PreviewEnvironmentReconciler(cluster.client(), informers, settings);
  const admin = cluster.client('test-admin');
  const environment = (name: string) => cluster.get({ ...previewEnvironmentKind, name }) as EnvironmentObject;
  return {
    cluster,
    files,
    reporter,
    clock,
    get reconciler() {
      return reconciler;
    },
    admin,
    environment,
    informers,
    reconcile: (name: string, retries = 0) => reconciler.reconcile(name, { signal: new AbortController().signal, retries }),
    /** The operator restarts (or another replica takes the lease): a reconciler remembering nothing, over the same cluster. */
    restart: () => {
      reconciler = new PreviewEnvironmentReconciler(cluster.client(), informers, settings);
    },
    /** The PreviewEnvironment of pull request `number`, as the GitHub side writes it. */
    create: async (number: number, spec: { headSha?: string; ttl?: string } = {}) => {
      // An apply: a second call moves the head SHA, as a push does.
      const name = `pr-${number}-${repository.repo}`;
      await admin.apply({
        ...previewEnvironmentKind,
        metadata: { name },
        spec: {
          repository: { ...github, cloneUrl: `https://github.example/${repository.owner}/${repository.repo}.git` },
          pullRequest: {
            number,
            headSha: spec.headSha ?? first,
            headRef: `feature-${number}`,
            baseRef: 'main',
            author: 'octocat',
            authorAssociation: 'MEMBER',
          },
          ...(spec.ttl ? { ttl: spec.ttl } : {}),
        },
      });
      return name;
    },
    /** What the Algorithm and Database controllers report once their workloads are up. */
    workloadsReady: async (namespace: string) => {
      for (const kind of [algorithmKind, databaseKind]) {
        for (const live of cluster.list(kind, namespace)) {
          const ready = { type: 'Ready', status: 'True', reason: 'Ready', message: 'ready', observedGeneration: live.metadata.generation };
          await admin.patch(ref(live), 'merge', { status: { conditions: [ready] } }, { subresource: 'status' });
        }
      }
    },
  };
}

function ref(obj: KubeObject): ObjectRef {
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

const condition = (env: EnvironmentObject, type: string) => env.status?.conditions?.find((c) => c.type === type);
const namespaceOf = (t: ReturnType<typeof setup>, name: string) => t.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name });

/** Up to Ready: created, reconciled (Deploying), workloads ready, reconciled again. */
async function readyEnvironment(t: ReturnType<typeof setup>, number = 1): Promise<string> {
  const name = await t.create(number);
  await t.reconcile(name);
  await t.workloadsReady(name);
  await t.reconcile(name);
  assert.equal(t.environment(name).status?.phase, 'Ready');
  return name;
}

describe('the PreviewEnvironment reconciler', () => {
  it('ready: applies the namespace and the rendering, Deploying until the workloads are Ready, then Ready with its URL', async () => {
    const t = setup();
    const name = await t.create(1);
    const result = await t.reconcile(name);
    const deploying = t.environment(name);
    assert.equal(deploying.status?.phase, 'Deploying');
    assert.equal(condition(deploying, 'Ready')?.reason, 'WaitingForResources');
    assert.deepEqual(deploying.metadata.finalizers, [previewEnvironmentFinalizer]);
    assert.ok(result && result.requeueAfter! > 0, 'looks again before the TTL runs out');
    const namespace = namespaceOf(t, name)!;
    assert.equal(namespace.metadata.ownerReferences?.[0]?.uid, deploying.metadata.uid, 'the namespace is the environment’s own');
    const applied = t.cluster.writes
      .filter((w) => w.verb === 'apply' && !w.dryRun && w.namespace === name)
      .map((w) => `${w.kind}/${w.name}`);
    for (const object of [
      'Algorithm/api',
      'Database/db',
      'NetworkPolicy/preview-isolation',
      'ResourceQuota/preview-quota',
      'ServiceAccount/default',
    ]) {
      assert.ok(applied.includes(object), `${object} applied: ${applied.join(', ')}`);
    }

    await t.workloadsReady(name);
    await t.reconcile(name);
    const ready = t.environment(name);
    assert.equal(ready.status?.phase, 'Ready');
    assert.equal(ready.status?.deployedSha, first);
    assert.match(ready.status?.url ?? '', /^http:\/\/.*\.preview\.test/);
    assert.equal(condition(ready, 'CertificateReady')?.reason, 'CertManagerNotInstalled');
    assert.deepEqual(t.reporter.statesFor(github, 1), ['deploying', 'ready']);
    assert.equal(t.reporter.lastFor(github, 1)?.input.url, ready.status?.url);
    assert.deepEqual(t.cluster.events(), [], 'no Event: status and the comment say it');
  });

  it('unchanged: another reconcile makes no write, to the cluster or to GitHub, and renders nothing again', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    const mark = t.cluster.writes.length;
    const reads = t.files.reads.length;
    const reports = t.reporter.reports.length;
    for (let i = 0; i < 3; i++) {
      t.clock.advance(60_000);
      await t.reconcile(name);
    }
    assert.deepEqual(t.cluster.writesSince(mark), []);
    assert.deepEqual(
      t.reporter.reports.slice(reports).flatMap((r) => r.writes),
      [],
      'the reporter’s hashes make each report a no-op',
    );
    assert.equal(t.files.reads.length, reads, 'the rendering is remembered');
  });

  it('queued: under a per-repository cap of 1, the lowest pull request deploys; the next waits, then starts once it is gone', async () => {
    const policy = { ...structuredClone(defaultPolicySettings), repositories: {} };
    policy.budgets.maxEnvironmentsPerRepository = 1;
    const t = setup({ policy });
    const one = await t.create(1);
    const two = await t.create(2);
    await t.reconcile(two);
    const queued = t.environment(two);
    assert.equal(queued.status?.phase, 'Queued');
    assert.match(condition(queued, 'Ready')?.message ?? '', /octo-org\/shop may run 1 environment at once; position 1 in the queue/);
    assert.equal(namespaceOf(t, two), undefined);
    assert.deepEqual(t.reporter.statesFor(github, 2), ['queued']);

    await t.reconcile(one);
    assert.equal(t.environment(one).status?.phase, 'Deploying');
    assert.deepEqual(t.reconciler.queuedSiblings(t.environment(one)), [two], 'a change to #1 wakes the queued #2');
    await t.admin.delete({ ...previewEnvironmentKind, name: one });
    await t.reconcile(one);
    await t.reconcile(one);
    assert.deepEqual(t.environment(one).metadata.finalizers ?? [], []);
    // The API server removes an object once its last finalizer is gone; the fake does on the next delete.
    await t.admin.delete({ ...previewEnvironmentKind, name: one });
    await t.reconcile(one);
    await t.reconcile(two);
    assert.equal(t.environment(two).status?.phase, 'Deploying');
  });

  it('siblings: a change wakes only those waiting for a slot — none without a cap, none admitted and still unwritten', async () => {
    const uncapped = setup({ deployingReportDelayMs: 5000 });
    const [a, b] = [await uncapped.create(1), await uncapped.create(2)];
    await uncapped.reconcile(b);
    assert.deepEqual(uncapped.reconciler.queuedSiblings(uncapped.environment(a)), [], 'no cap: nobody waits for a slot');

    const policy = { ...structuredClone(defaultPolicySettings), repositories: {} };
    policy.budgets.maxEnvironmentsPerRepository = 2;
    const t = setup({ policy, deployingReportDelayMs: 5000 });
    const [one, two, three] = [await t.create(1), await t.create(2), await t.create(3)];
    await t.reconcile(two);
    assert.equal(t.environment(two).status?.phase, undefined, 'admitted and applied, its first status still waiting');
    assert.deepEqual(t.reconciler.queuedSiblings(t.environment(one)), [three], '#3 has not been admitted; #2 has');

    const namespace = namespaceOf(t, two)!;
    assert.deepEqual(t.reconciler.queuedBehindNamespace(namespace), [], 'a namespace standing frees no slot');
    const going = { ...namespace, metadata: { ...namespace.metadata, deletionTimestamp: new Date().toISOString() } };
    assert.deepEqual(t.reconciler.queuedBehindNamespace(going), [one, three], 'its namespace going wakes those not admitted');
    // After a relist, the DELETED event may carry an older copy, without its deletionTimestamp.
    await t.admin.patch({ ...previewEnvironmentKind, name: two }, 'merge', { status: { phase: 'Expired' } }, { subresource: 'status' });
    assert.deepEqual(t.reconciler.queuedBehindNamespace(namespace), [one, three], 'an Expired environment’s namespace wakes them');
  });

  it('expired: past its TTL the namespace goes and the environment stays Expired at that SHA, writing nothing more', async () => {
    const t = setup();
    const name = await t.create(1, { ttl: '1h' });
    await t.reconcile(name);
    t.clock.advance(hour + 1000);
    assert.deepEqual(await t.reconcile(name), {});
    const expired = t.environment(name);
    assert.equal(expired.status?.phase, 'Expired');
    assert.equal(expired.status?.expiredSha, first);
    assert.equal(expired.status?.url, undefined);
    assert.match(condition(expired, 'Ready')?.message ?? '', /no new commit was deployed within its time to live of 1h/);
    assert.equal(namespaceOf(t, name), undefined);
    assert.equal(t.reporter.lastFor(github, 1)?.input.state, 'expired');

    const mark = t.cluster.writes.length;
    const reports = t.reporter.reports.length;
    t.clock.advance(hour);
    await t.reconcile(name);
    assert.deepEqual(t.cluster.writesSince(mark), []);
    assert.equal(t.reporter.reports.length, reports, 'not even a report');
  });

  it("the quota: a repository's resources above the policy's ceilings are cut to them, and the PR comment says so", async () => {
    const policy = { ...structuredClone(defaultPolicySettings), repositories: {} };
    policy.budgets.maxResources = { cpu: '2', memory: '64Gi', storage: '500Gi', pods: 200, gpu: 1 };
    const t = setup({ policy });
    // previewYaml() asks for 4 CPUs.
    const name = await t.create(1);
    await t.reconcile(name);
    const quota = t.cluster.get({ apiVersion: 'v1', kind: 'ResourceQuota', namespace: name, name: 'preview-quota' }) as KubeObject & {
      spec: { hard: Record<string, string> };
    };
    assert.equal(quota.spec.hard['limits.cpu'], '2');
    assert.equal(quota.spec.hard['limits.memory'], '8Gi', 'within its ceiling: as asked');
    assert.equal(quota.spec.hard['requests.nvidia.com/gpu'], '1', 'no GPU total asked: the ceiling bounds it');
    assert.deepEqual(t.reporter.lastFor(github, 1)?.input.reasons, ["resources.cpu 4 is above the operator's ceiling: cut to 2"]);
  });

  it("TTL: the repository's `ttl` applies over the policy's default, cut to the policy's maxTtl; spec.ttl set by hand wins", async () => {
    const expiry = async (ttl: string, budgets: { ttl: string; maxTtl: string | null }, specTtl?: string) => {
      const policy = {
        ...defaultPolicySettings,
        budgets: { ...defaultPolicySettings.budgets, ...budgets, maxEnvironmentsPerRepository: null },
        repositories: {},
      };
      const t = setup({ policy });
      t.files.commit(repository, first, { '.preview/preview.yaml': `${previewYaml()}ttl: ${ttl}\n` });
      const name = await t.create(1, specTtl ? { ttl: specTtl } : {});
      await t.reconcile(name);
      const { lastDeployedAt, expiresAt } = t.environment(name).status ?? {};
      return (Date.parse(expiresAt!) - Date.parse(lastDeployedAt!)) / 60_000;
    };
    assert.equal(await expiry('2m', { ttl: '72h', maxTtl: null }), 2, 'the repository asks for less than the default');
    assert.equal(await expiry('240h', { ttl: '72h', maxTtl: null }), 240 * 60, 'and for more, without a cap');
    assert.equal(await expiry('240h', { ttl: '72h', maxTtl: '96h' }), 96 * 60, 'the policy caps it');
    assert.equal(await expiry('2m', { ttl: '72h', maxTtl: '96h' }), 2, "under the cap, the repository's");
    assert.equal(await expiry('2m', { ttl: '72h', maxTtl: null }, '5h'), 5 * 60, 'spec.ttl, set by hand');
  });

  it('checks pending: a new head SHA waits for CI, nothing is applied, and it asks again at the poll interval', async () => {
    const asked: string[] = [];
    let verdict: ChecksVerdict = { state: 'pending', failing: [], pending: ['ci/build'], passed: [], message: 'ci/build is in progress' };
    const checksGate = { state: async (_repository: unknown, sha: string) => (asked.push(sha), verdict) };
    const t = setup({ checksGate, checksPollMs: 15_000 });
    const name = await t.create(1);
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 15_000 });
    const waiting = t.environment(name);
    assert.equal(waiting.status?.phase, 'Pending');
    assert.equal(condition(waiting, 'ChecksPassed')?.reason, 'WaitingForChecks');
    assert.match(condition(waiting, 'Ready')?.message ?? '', /^111111111111 waits for its checks \(ci\/build is in progress\)$/);
    assert.equal(namespaceOf(t, name), undefined);
    assert.equal(t.files.reads.length, 0, 'not even rendered');
    assert.equal(t.reporter.lastFor(github, 1)?.input.state, 'waiting-for-checks');
    assert.deepEqual(asked, [first]);

    verdict = { ...verdict, state: 'passed', pending: [], passed: ['ci/build'], message: 'ci/build passed' };
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Deploying');
    assert.equal(condition(t.environment(name), 'ChecksPassed')?.status, 'True');
  });

  it('namespace conflict: a namespace of someone else’s is left untouched and the environment fails', async () => {
    const t = setup();
    await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-1-shop', labels: { team: 'other' } } });
    const name = await t.create(1);
    const mark = t.cluster.writes.length;
    const result = await t.reconcile(name);
    const failed = t.environment(name);
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(condition(failed, 'PolicyCompliant')?.reason, 'NamespaceConflict');
    assert.equal(condition(failed, 'ConfigValid'), undefined, 'not the configuration’s fault');
    assert.deepEqual(namespaceOf(t, name)?.metadata.labels, { team: 'other' });
    const touched = t.cluster.writes.slice(mark).filter((w) => w.kind !== 'PreviewEnvironment' && w.kind !== 'Event');
    assert.deepEqual(touched, []);
    assert.deepEqual(t.reporter.lastFor(github, 1)?.input.reasons, ['namespace pr-1-shop already exists and belongs to something else']);

    assert.ok(result && result.requeueAfter! <= 30_000, `it looks again within 30 s: ${JSON.stringify(result)}`);
    const still = t.cluster.writes.length;
    await t.reconcile(name);
    assert.deepEqual(t.cluster.writesSince(still), [], 'looking again while the namespace stands writes nothing');
    await t.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'pr-1-shop' });
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Deploying', 'its removal lets the environment deploy');
  });

  it('namespace conflict: one dressed in our ownership label is still someone else’s, neither adopted nor deleted', async () => {
    const t = setup();
    const labels = { 'preview.alien6.io/environment': 'pr-1-shop' };
    await t.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pr-1-shop', labels } });
    const name = await t.create(1);
    const mark = t.cluster.writes.length;
    await t.reconcile(name);
    assert.equal(condition(t.environment(name), 'PolicyCompliant')?.reason, 'NamespaceConflict');
    await t.admin.delete({ ...previewEnvironmentKind, name });
    await t.reconcile(name);
    assert.deepEqual(t.environment(name).metadata.finalizers ?? [], [], 'the environment goes');
    assert.deepEqual(namespaceOf(t, name)?.metadata.labels, labels, 'the namespace stays as its owner made it');
    const touched = t.cluster.writes.slice(mark).filter((w) => w.kind !== 'PreviewEnvironment' && w.kind !== 'Event');
    assert.deepEqual(touched, []);
  });

  it('render failure: an invalid .preview/preview.yaml fails the environment with every error; nothing is applied', async () => {
    const t = setup();
    t.files.commit(repository, second, { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: api\n    replicas: many\n' });
    const name = await t.create(1, { headSha: second });
    const result = await t.reconcile(name);
    const failed = t.environment(name);
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(condition(failed, 'ConfigValid')?.reason, 'ConfigInvalid');
    assert.match(condition(failed, 'ConfigValid')?.message ?? '', /\.preview\/preview\.yaml at 222222222222 is invalid/);
    assert.ok(t.reporter.lastFor(github, 1)!.input.reasons.every((line) => line.startsWith('.preview/preview.yaml')));
    assert.equal(namespaceOf(t, name), undefined);
    assert.ok(result && result.requeueAfter! > 0, 'looks again when the TTL runs out');
    const operatorWrites = t.cluster.writes.filter((w) => w.fieldManager === 'preview-operator');
    assert.deepEqual(
      operatorWrites.filter((w) => w.kind !== 'PreviewEnvironment' && w.kind !== 'Event'),
      [],
    );
  });

  it('teardown: deleting the environment reports destroyed, deletes the namespace, then drops the finalizer', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    await t.admin.delete({ ...previewEnvironmentKind, name });
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 }, 'polls until the namespace is gone');
    assert.equal(namespaceOf(t, name), undefined);
    assert.equal(t.environment(name).status?.phase, 'Terminating');
    assert.equal(t.reporter.lastFor(github, 1)?.input.state, 'destroyed');
    assert.deepEqual(t.environment(name).metadata.finalizers, [previewEnvironmentFinalizer], 'held until the namespace is gone');
    await t.reconcile(name);
    assert.deepEqual(t.environment(name).metadata.finalizers ?? [], []);
  });

  it('teardown: a namespace slow to go is looked at less often the longer it terminates, at least every 30 s', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    const namespace = { apiVersion: 'v1', kind: 'Namespace', name };
    await t.admin.patch(namespace, 'merge', { metadata: { finalizers: ['example.com/slow'] } });
    await t.admin.delete({ ...previewEnvironmentKind, name });
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 }, 'looks again soon after the delete');
    t.clock.advance(2000);
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 });
    t.clock.advance(18_000);
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 20_000 }, 'terminating for 20 s: looks again in 20 s');
    t.clock.advance(100_000);
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 30_000 }, 'never waits longer than 30 s');
    assert.deepEqual(t.environment(name).metadata.finalizers, [previewEnvironmentFinalizer], 'held until the namespace is gone');
  });

  it('drift after a restart while the head is refused: the guards of what serves are learnt from the deployed commit and put back', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    // The author pushes a head that is refused (here an invalid preview.yaml; a guard refusal is the same).
    t.files.commit(repository, second, { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: api\n    replicas: many\n' });
    await t.create(1, { headSha: second });
    t.restart();
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Failed');
    assert.equal(t.environment(name).status?.deployedSha, first, 'the deployed commit keeps serving');
    const isolation = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', namespace: name, name: 'preview-isolation' };
    const deleted = t.cluster.get(isolation)!;
    await t.admin.delete(isolation);
    const networkPolicies = t.informers.guards.find((i) => i.kind.kind === 'NetworkPolicy')!;
    assert.deepEqual(t.reconciler.driftedGuard(networkPolicies, deleted), [name], 'the deletion wakes the environment');
    t.clock.advance(60_000);
    await t.reconcile(name);
    assert.ok(t.cluster.get(isolation), 'put back');
  });

  it('readiness right after the apply: an Ingress created now exists though its watch event has not come yet', async () => {
    const t = setup();
    const name = await t.create(1);
    // The Ingress cache behind: its creation comes back by the watch, which wakes no reconcile.
    (t.informers.ingresses as FakeInformer).hold();
    await t.reconcile(name);
    const resources = t.environment(name).status?.resources ?? [];
    const ingress = resources.find((r) => r.kind === 'Ingress');
    assert.equal(ingress?.ready, true, `the Ingress as the API server answered its apply: ${JSON.stringify(ingress)}`);
    assert.deepEqual(
      resources.filter((r) => !r.ready).map((r) => r.kind),
      ['Algorithm', 'Database'],
      'only the workloads are waited for',
    );
  });

  it('expired: a cache behind its own delete does not make the namespace deletion fail, nor send it again', async () => {
    const t = setup();
    const name = await t.create(1, { ttl: '1h' });
    await t.reconcile(name);
    await t.admin.patch({ apiVersion: 'v1', kind: 'Namespace', name }, 'merge', { metadata: { finalizers: ['example.com/slow'] } });
    (t.informers.namespaces as FakeInformer).hold();
    t.clock.advance(hour + 1000);
    const mark = t.cluster.writes.length;
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 }, 'looks again while the namespace goes');
    assert.equal(t.environment(name).status?.phase, 'Expired');
    assert.ok(namespaceOf(t, name)?.metadata.deletionTimestamp);
    t.clock.advance(2000);
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 });
    assert.deepEqual(
      t.cluster.writesSince(mark).filter((w) => w.startsWith('delete Namespace')),
      [`delete Namespace ${name}`],
      'one delete, though the cache has not shown it yet',
    );
  });

  it('teardown: a reconcile woken before the cache shows the namespace going does not delete it again', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    await t.admin.patch({ apiVersion: 'v1', kind: 'Namespace', name }, 'merge', { metadata: { finalizers: ['example.com/slow'] } });
    (t.informers.namespaces as FakeInformer).hold();
    await t.admin.delete({ ...previewEnvironmentKind, name });
    const mark = t.cluster.writes.length;
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 });
    // Woken at once, as by its own status write's event, with the namespace cache still behind.
    assert.deepEqual(await t.reconcile(name), { requeueAfter: 2000 });
    assert.deepEqual(
      t.cluster.writesSince(mark).filter((w) => w.startsWith('delete Namespace')),
      [`delete Namespace ${name}`],
    );
    assert.deepEqual(t.environment(name).metadata.finalizers, [previewEnvironmentFinalizer], 'held until the namespace is gone');
  });

  it('all or nothing: a new rendering the API server refuses in its dry run applies nothing; the deployed SHA keeps serving', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    t.files.commit(repository, second, { '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:2.0' }) });
    const lift = t.cluster.refuse((write) =>
      write.dryRun && write.kind === 'Algorithm'
        ? fail(422, 'Invalid', 'Algorithm.ai.alien6.io "api" is invalid: admission says no')
        : undefined,
    );
    await t.create(1, { headSha: second });
    const mark = t.cluster.writes.length;
    await t.reconcile(name);
    const failed = t.environment(name);
    assert.equal(failed.status?.phase, 'Failed');
    assert.equal(condition(failed, 'PolicyCompliant')?.reason, 'ApplyRejected');
    assert.match(condition(failed, 'Ready')?.message ?? '', /nothing of 222222222222 was applied; 111111111111 keeps serving/);
    const applied = t.cluster.writes.slice(mark).filter((w) => w.verb === 'apply' && !w.dryRun);
    assert.deepEqual(applied, []);
    assert.equal(failed.status?.deployedSha, first);

    lift();
    t.clock.advance(61_000);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.deployedSha, second, 'tried again once the refusal is a minute old');
  });

  it('guards: one deleted by anyone else wakes its environment, put back even while a new head SHA waits for CI', async () => {
    const verdict = (sha: string): ChecksVerdict =>
      sha === first
        ? { state: 'passed', failing: [], pending: [], passed: ['ci/build'], message: 'ci/build passed' }
        : { state: 'pending', failing: [], pending: ['ci/build'], passed: [], message: 'ci/build is in progress' };
    const t = setup({ checksGate: { state: async (_repository, sha) => verdict(sha) } });
    const name = await readyEnvironment(t);
    const networkPolicies = t.informers.guards.find((i) => i.kind.kind === 'NetworkPolicy')!;
    const policy = networkPolicies.get(`${name}/preview-isolation`)!;
    assert.deepEqual(t.reconciler.driftedGuard(networkPolicies, policy), [], 'as applied: wakes nothing');
    await t.create(1, { headSha: second });
    await t.admin.delete(ref({ ...policy, apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' }));
    assert.deepEqual(t.reconciler.driftedGuard(networkPolicies, policy), [name]);
    await t.reconcile(name);
    assert.equal(condition(t.environment(name), 'ChecksPassed')?.reason, 'WaitingForChecks');
    assert.ok(networkPolicies.get(`${name}/preview-isolation`), 'put back');
  });

  it('kstatus: Reconciling while it deploys, Ready alone once ready, Stalled when it fails; each at the generation', async () => {
    const t = setup();
    const kstatus = (env: EnvironmentObject) =>
      ['Ready', 'Reconciling', 'Stalled'].map((type) => {
        const c = condition(env, type);
        return `${type}=${c?.status} ${c?.reason}${c?.observedGeneration === env.metadata.generation ? '' : ' (stale)'}`;
      });
    const name = await t.create(1);
    await t.reconcile(name);
    const deploying = t.environment(name);
    assert.deepEqual(kstatus(deploying), [
      'Ready=False WaitingForResources',
      'Reconciling=True WaitingForResources',
      'Stalled=False Progressing',
    ]);
    assert.equal(deploying.status?.observedGeneration, deploying.metadata.generation);
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.deepEqual(kstatus(t.environment(name)), ['Ready=True Ready', 'Reconciling=False Reconciled', 'Stalled=False Reconciled']);

    t.files.commit(repository, second, { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: api\n    replicas: many\n' });
    await t.create(1, { headSha: second });
    await t.reconcile(name);
    const failed = t.environment(name);
    assert.equal(failed.metadata.generation, 2);
    assert.deepEqual(kstatus(failed), ['Ready=False ConfigInvalid', 'Reconciling=False Stalled', 'Stalled=True ConfigInvalid']);
    assert.equal(failed.status?.observedGeneration, 2);
  });

  it('Events only for what a user acts on: none for a deploy, a redeploy or a teardown; a Warning for a failure', async () => {
    const t = setup();
    const name = await readyEnvironment(t);
    t.files.commit(repository, second, { '.preview/preview.yaml': previewYaml() });
    await t.create(1, { headSha: second });
    await t.reconcile(name);
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.deployedSha, second);
    assert.deepEqual(t.cluster.events(), []);
    const third = '3'.repeat(40);
    t.files.commit(repository, third, { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: api\n    replicas: many\n' });
    await t.create(1, { headSha: third });
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Failed');
    assert.equal(t.cluster.events().length, 1);
    assert.match(t.cluster.events()[0]!, /^Warning Failed: /);
  });
});

describe('the wait before a deploy is reported', () => {
  const statusWrites = (t: ReturnType<typeof setup>, name: string) =>
    t.cluster.writes.filter((w) => w.kind === 'PreviewEnvironment' && w.name === name && w.subresource === 'status' && !w.dryRun);

  it('a deploy Ready within the wait is written once and reported once, already Ready', async () => {
    const t = setup({ deployingReportDelayMs: 5000 });
    const name = await t.create(1);
    const result = await t.reconcile(name);
    assert.ok(t.cluster.get({ apiVersion: 'v1', kind: 'Namespace', name }), 'applied at once');
    assert.equal(t.environment(name).status?.phase, undefined, 'nothing written yet');
    assert.equal(t.reporter.reports.length, 0, 'nothing reported yet');
    assert.equal(result?.requeueAfter, 5000, 'looks again when the wait ends');
    t.clock.advance(2000);
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Ready');
    assert.equal(statusWrites(t, name).length, 1, 'one status write');
    assert.deepEqual(
      t.reporter.reports.map((r) => r.input.state),
      ['ready'],
      'one report: the comment is posted once, saying ready',
    );
  });

  it('a deploy not Ready when the wait ends is written and reported as Deploying then', async () => {
    const t = setup({ deployingReportDelayMs: 5000 });
    const name = await t.create(1);
    await t.reconcile(name);
    t.clock.advance(3000);
    const early = await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, undefined);
    assert.equal(early?.requeueAfter, 2000, 'the wait counts from the first apply, not from each reconcile');
    t.clock.advance(2000);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Deploying');
    assert.deepEqual(
      t.reporter.reports.map((r) => r.input.state),
      ['deploying'],
    );
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Ready');
    assert.equal(statusWrites(t, name).length, 2);
  });

  it('a new head SHA over a Ready environment: Ready keeps describing what serves until the new one is Ready or the wait ends', async () => {
    const t = setup({ deployingReportDelayMs: 5000 });
    t.files.commit(repository, second, { '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:2.0' }) });
    const name = await t.create(1);
    await t.reconcile(name);
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.deployedSha, first);
    await t.create(1, { headSha: second });
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Ready');
    assert.equal(t.environment(name).status?.deployedSha, first);
    t.clock.advance(5000);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Deploying');
    assert.equal(t.environment(name).status?.deployedSha, second);
  });

  it('held back, a deploy is timed once (delivery → applied) and its checks are asked once', async () => {
    const applied: number[] = [];
    const asked: string[] = [];
    const passed: ChecksVerdict = { state: 'passed', failing: [], pending: [], passed: ['ci/build'], message: 'ci/build passed' };
    const late: ChecksVerdict = { state: 'failed', failing: ['late/lint'], pending: [], passed: [], message: 'late/lint failed' };
    let verdict = passed;
    const t = setup({
      deployingReportDelayMs: 5000,
      deliveryTiming: { applied: (s) => applied.push(s), ready: () => {} },
      checksGate: { state: async (_repository, sha) => (asked.push(sha), verdict) },
    });
    const name = await t.create(1);
    const deliveredAt = { 'preview.alien6.io/delivered-at': new Date(t.clock.now()).toISOString() };
    await t.admin.patch({ ...previewEnvironmentKind, name }, 'merge', { metadata: { annotations: deliveredAt } });
    for (let i = 0; i < 3; i++, t.clock.advance(1000)) await t.reconcile(name); // woken by its objects' events
    verdict = late; // a late check suite fails while the applied SHA is held back
    await t.reconcile(name);
    assert.equal(applied.length, 1, 'applied once');
    assert.equal(asked.length, 1, 'the checks of the applied SHA are not asked again');
    assert.equal(t.environment(name).status?.phase, undefined, 'not failed by a verdict after it was deployed');
  });

  it('not held back: the deployed SHA no longer Ready, or a new one after Queued, is written at once', async () => {
    const t = setup({ deployingReportDelayMs: 5000 });
    const name = await t.create(1);
    await t.reconcile(name);
    await t.workloadsReady(name);
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Ready');
    t.clock.advance(hour);
    for (const live of t.cluster.list(algorithmKind, name)) {
      const notReady = {
        type: 'Ready',
        status: 'False',
        reason: 'RollingOut',
        message: '0/1',
        observedGeneration: live.metadata.generation,
      };
      await t.admin.patch(ref(live), 'merge', { status: { conditions: [notReady] } }, { subresource: 'status' });
    }
    await t.reconcile(name);
    assert.equal(t.environment(name).status?.phase, 'Deploying', 'no longer Ready: said at once');
    assert.equal(t.reporter.lastFor(github, 1)?.input.state, 'deploying');

    const policy = { ...structuredClone(defaultPolicySettings), repositories: {} };
    policy.budgets.maxEnvironmentsPerRepository = 1;
    const capped = setup({ policy, deployingReportDelayMs: 5000 });
    const [one, two] = [await capped.create(1), await capped.create(2)];
    await capped.reconcile(two);
    assert.equal(capped.environment(two).status?.phase, 'Queued');
    await capped.admin.delete({ ...previewEnvironmentKind, name: one });
    await capped.reconcile(two);
    assert.equal(capped.environment(two).status?.phase, 'Deploying', 'out of Queued: said at once, not held back');
  });

  it('restarted while a deploy is held back: the environment applied keeps its slot; the cap holds', async () => {
    const policy = { ...structuredClone(defaultPolicySettings), repositories: {} };
    policy.budgets.maxEnvironmentsPerRepository = 1;
    const t = setup({ policy, deployingReportDelayMs: 5000 });
    const two = await t.create(2);
    await t.reconcile(two);
    assert.ok(namespaceOf(t, two), '#2 applied, its status held back');
    const one = await t.create(1);
    const restarted = new PreviewEnvironmentReconciler(t.cluster.client(), t.informers, {
      reporter: t.reporter,
      repositories: t.files,
      domain: 'preview.test',
      logger: silentLogger,
      clock: t.clock,
      policy,
      deployingReportDelayMs: 5000,
    });
    const ctx = { signal: new AbortController().signal, retries: 0 };
    await restarted.reconcile(one, ctx);
    await restarted.reconcile(two, ctx);
    assert.equal(t.environment(one).status?.phase, 'Queued', '#1 waits behind the applied #2');
    assert.equal(namespaceOf(t, one), undefined);
    assert.notEqual(t.environment(two).status?.phase, 'Queued');
  });
});
