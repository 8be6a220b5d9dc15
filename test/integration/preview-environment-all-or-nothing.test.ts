// All or nothing, and guards that stay: a rendering the API server refuses (a CRD's CEL rule)
// applies nothing — neither in a fresh namespace nor over a rendering already serving, which keeps
// serving as it was — and the namespace's guards, lifted by a workload of the preview through
// RBAC it holds, are put back at once, without a new push. Every write is read from the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, NotFoundError, type KubeObject, type ObjectRef } from '../../src/kube/index.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';
import { kubeconfigYaml } from '../cluster/start-cluster.js';
import type { AuditEvent } from '../cluster/audit-log.js';
import { refuseWrites } from '../support/admission-refusal.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  getEnvironment,
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
  // Progress is written on every reconcile, so each reconcile shows in the reporter (Algorithms never get Ready
  // here); no Certificates, whose polling would reconcile every environment twice a second.
  operator = await startPreviewOperator({ progressIntervalMs: 0, tlsIssuer: false });
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml() });
});
after(async () => {
  await operator?.stop();
  await repository?.cleanup();
});

const repo = () => ({ owner: repository.owner, name: repository.repo });
const condition = (env: EnvironmentObject, type: string) => env.status?.conditions?.find((c) => c.type === type);
const algorithmKind = { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' };
const databaseKind = { apiVersion: 'mycompany.com/v1', kind: 'Database' };
const guardKinds = {
  networkPolicy: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', name: 'preview-isolation' },
  quota: { apiVersion: 'v1', kind: 'ResourceQuota', name: 'preview-quota' },
  limitRange: { apiVersion: 'v1', kind: 'LimitRange', name: 'preview-defaults' },
};

async function openEnvironment(pullRequest: number, files: Record<string, string>): Promise<{ name: string; headSha: string }> {
  const headSha = await repository.openPullRequest(pullRequest, { headBranch: `feature-${pullRequest}`, files });
  return { name: await applyEnvironment(operator, { repository, pullRequest, headSha }), headSha };
}

/** A write of a guard the repository cannot shape (from the operator's settings alone: not dry-run, applied first). */
const isSettledGuardWrite = (w: string) => /^patch (limitranges|networkpolicies)\/|^patch serviceaccounts\/default$/.test(w);

/** The operator's writes in the namespace since `mark`, apart: dry runs, and real writes to anything but the namespace itself. */
async function writesIn(namespace: string, mark: number): Promise<{ dryRuns: string[]; writes: string[] }> {
  await operator.cluster.audit.settle();
  const events = operator.cluster.audit.writes(mark, { user: operator.identity.username, namespace, excludeDryRun: false });
  const line = (e: AuditEvent) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.name}`;
  return {
    dryRuns: events.filter((e) => /[?&]dryRun=/.test(e.requestURI)).map(line),
    writes: events.filter((e) => !/[?&]dryRun=/.test(e.requestURI) && e.objectRef?.resource !== 'namespaces').map(line),
  };
}

async function getOrUndefined(client: KubeClient, ref: ObjectRef): Promise<KubeObject | undefined> {
  return client.get(ref).catch((err) => (err instanceof NotFoundError ? undefined : Promise.reject(err)));
}

/** A client acting as the namespace's `default` ServiceAccount (a workload of the preview), from a token the admin asks for. */
async function asDefaultServiceAccount(namespace: string): Promise<KubeClient> {
  const admin = operator.admin;
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: 'default' };
  await waitFor(`the default ServiceAccount of ${namespace}`, () => getOrUndefined(admin, account));
  const answer = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/default/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kubeConfig = new KubeConfig();
  const caFile = operator.cluster.kubeConfig.getCurrentCluster()!.caFile!;
  kubeConfig.loadFromString(kubeconfigYaml(operator.cluster.server, caFile, answer.status.token, 'default'));
  return new KubeClient(kubeConfig, { fieldManager: 'preview-workload' });
}

describe('a rendering is applied all or nothing', () => {
  it('a fresh environment whose rendering the API server refuses (a CEL rule, last in apply order) gets none of its objects', async () => {
    const mark = operator.cluster.audit.mark();
    const { name } = await openEnvironment(1, {
      // Accepted objects first in apply order (the guards, a ConfigMap, a Service), then an Algorithm its CRD refuses.
      '.preview/main.ts': `
        import { Algorithm, kplus, type PreviewEnvironmentChart } from 'preview-operator/constructs';
        export default function (chart: PreviewEnvironmentChart): void {
          new kplus.k8s.KubeConfigMap(chart, 'settings', { metadata: { name: 'settings' }, data: { mode: 'preview' } });
          new kplus.k8s.KubeService(chart, 'backend', {
            metadata: { name: 'backend' },
            spec: { selector: { app: 'backend' }, ports: [{ port: 80, targetPort: kplus.k8s.IntOrString.fromNumber(8080) }] },
          });
          new Algorithm(chart, 'broken', {
            name: 'broken', image: 'registry.example.com/team/api:1.0', replicas: 3, scaling: { minReplicas: 3, maxReplicas: 2 },
          });
        }`,
    });
    const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed', 90_000);
    const { dryRuns, writes } = await writesIn(name, mark);
    assert.deepEqual(writes, [], 'no object was written in the namespace');
    assert.ok(
      dryRuns.some((d) => d === 'patch algorithms/broken'),
      `the refused Algorithm was dry-run: ${dryRuns.join(', ')}`,
    );
    for (const [kind, names] of [
      [{ apiVersion: 'v1', kind: 'ConfigMap' }, ['kube-root-ca.crt']],
      [{ apiVersion: 'v1', kind: 'Service' }, []],
      [algorithmKind, []],
      [guardKinds.networkPolicy, []],
      [guardKinds.quota, []],
      [guardKinds.limitRange, []],
    ] as const) {
      assert.deepEqual(await namesOf(operator, kind, name), names, `${kind.kind} in ${name}`);
    }

    const policy = condition(failed, 'PolicyCompliant')!;
    assert.equal(policy.reason, 'ApplyRejected', policy.message);
    assert.match(policy.message, /Algorithm\.ai\.alien6\.io "broken" is invalid.*minReplicas must be less than or equal to .*maxReplicas/);
    assert.match(policy.message, /nothing of [0-9a-f]{12} was applied/);
    const report = await operator.reporter.waitForState(repo(), 1, 'failed');
    const named = report.input.reasons.some((r) => /^Algorithm broken: spec\.scaling\.minReplicas: .*must be less than or equal/.test(r));
    assert.ok(named, `the comment names the object and the rule: ${report.input.reasons.join(' | ')}`);
  });

  it('a guard refused at its real write (not dry-run) stops the apply before any object of the repository, of its kind too', async () => {
    const pullRequest = 7;
    const name = `pr-${pullRequest}-${repository.repo}`;
    // The `default` ServiceAccount (a guard, not dry-run) is refused; the repository's own ServiceAccount, of the same
    // kind and apply rank, passes every check — and must not be written once the guard before it is refused.
    const lift = await refuseWrites(operator.admin, operator.cluster.kubeConfig, {
      group: '',
      resource: 'serviceaccounts',
      environment: name,
      expression: "object.metadata.name != 'default'",
      message: 'the default ServiceAccount is the platform team’s',
      probe: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
    });
    try {
      const mark = operator.cluster.audit.mark();
      await openEnvironment(pullRequest, {
        '.preview/main.ts': `
          import { kplus, type PreviewEnvironmentChart } from 'preview-operator/constructs';
          export default function (chart: PreviewEnvironmentChart): void {
            new kplus.k8s.KubeServiceAccount(chart, 'worker', { metadata: { name: 'worker' }, automountServiceAccountToken: false });
          }`,
      });
      const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed', 90_000);
      const { dryRuns, writes } = await writesIn(name, mark);
      assert.deepEqual(dryRuns.filter(isSettledGuardWrite), [], 'the guards the repository cannot shape are not dry-run');
      for (const judged of ['patch serviceaccounts/worker', 'patch resourcequotas/preview-quota', 'patch algorithms/api'])
        assert.ok(dryRuns.includes(judged), `${judged} was dry-run: ${dryRuns.join(', ')}`);
      const afterGuards = writes.filter((w) => !/ (resourcequotas|limitranges|networkpolicies)\/|serviceaccounts\/default$/.test(w));
      assert.deepEqual(afterGuards, [], `nothing of the repository's was written: ${writes.join(', ')}`);
      assert.deepEqual(await namesOf(operator, { apiVersion: 'v1', kind: 'ServiceAccount' }, name), ['default']);
      for (const kind of [guardKinds.quota, guardKinds.limitRange, guardKinds.networkPolicy, algorithmKind]) {
        assert.deepEqual(await namesOf(operator, kind, name), [], `${kind.kind} in ${name}: what the apply created went again`);
      }
      const policy = condition(failed, 'PolicyCompliant')!;
      assert.match(policy.message, /the default ServiceAccount is the platform team’s/);
      assert.match(policy.message, /is not applied \(what it created was deleted again\)/);
    } finally {
      await lift();
    }
  });

  it('over a rendering that serves, a refused push applies nothing and what serves stays as it was; a fixed push deploys', async () => {
    const firstMark = operator.cluster.audit.mark();
    const { name, headSha } = await openEnvironment(2, { 'src/app.txt': 'v1\n' });
    await waitForEnvironment(operator, name, 'deployed', (e) => e.status?.deployedSha === headSha, 90_000);
    const first = await writesIn(name, firstMark);
    process.stderr.write(`a fresh rendering: ${first.writes.length} objects written, ${first.dryRuns.length} dry-run requests first\n`);

    // The push changes the Algorithm's image (accepted alone) and the Database's engine (immutable: its CRD refuses the change).
    const mark = operator.cluster.audit.mark();
    const badSha = await repository.pushToPullRequest(2, {
      '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:2.0' }).replace('engine: postgresql', 'engine: mysql'),
    });
    await applyEnvironment(operator, { repository, pullRequest: 2, headSha: badSha });
    const refused = await waitForEnvironment(operator, name, 'the push refused', (e) => e.status?.phase === 'Failed', 90_000);
    const algorithm = await operator.admin.get<KubeObject>({ ...algorithmKind, namespace: name, name: 'api' });
    assert.equal((algorithm.spec as { image: string }).image, 'registry.example.com/team/api:1.0', 'the Algorithm was not updated');
    const database = await operator.admin.get<KubeObject>({ ...databaseKind, namespace: name, name: 'db' });
    assert.equal((database.spec as { engine: string }).engine, 'postgresql');
    const bad = await writesIn(name, mark);
    assert.deepEqual(bad.writes, [], 'nothing written');
    assert.deepEqual([...bad.dryRuns].sort(), ['patch algorithms/api', 'patch databases/db'], 'only what would change was dry-run');

    const policy = condition(refused, 'PolicyCompliant')!;
    assert.equal(policy.reason, 'ApplyRejected');
    assert.match(policy.message, /Database\.mycompany\.com "db" is invalid.*spec\.engine is immutable \(it was postgresql\)/);
    assert.match(policy.message, new RegExp(`nothing of ${badSha.slice(0, 12)} was applied; ${headSha.slice(0, 12)} keeps serving`));
    assert.equal(refused.status?.deployedSha, headSha, 'the deployed SHA is still the good one');
    const report = operator.reporter.lastFor(repo(), 2)!;
    assert.ok(
      report.input.reasons.some((r) => /^Database db: spec\.engine: .*immutable/.test(r)),
      report.input.reasons.join(' | '),
    );

    // While refused, what serves is still looked after: a guard deleted is put back.
    const networkPolicy = { ...guardKinds.networkPolicy, namespace: name };
    await operator.admin.delete(networkPolicy);
    const back = () => getOrUndefined(operator.admin, networkPolicy);
    await waitFor('the NetworkPolicy back while the push is refused', back, { timeoutMs: 30_000 });

    const fixedMark = operator.cluster.audit.mark();
    const fixed = previewYaml({ image: 'registry.example.com/team/api:2.0' });
    const fixedSha = await repository.pushToPullRequest(2, { '.preview/preview.yaml': fixed });
    await applyEnvironment(operator, { repository, pullRequest: 2, headSha: fixedSha });
    const deployed = (e: EnvironmentObject) => e.status?.deployedSha === fixedSha && e.status.phase === 'Deploying';
    await waitForEnvironment(operator, name, 'the fixed push deployed', deployed);
    const updated = await operator.admin.get<KubeObject>({ ...algorithmKind, namespace: name, name: 'api' });
    assert.equal((updated.spec as { image: string }).image, 'registry.example.com/team/api:2.0');
    const second = await writesIn(name, fixedMark);
    process.stderr.write(`a push changing one object: ${second.writes.length} written, ${second.dryRuns.length} dry-run first\n`);
    assert.deepEqual(second.dryRuns, ['patch algorithms/api']);
    const judgedWrites = first.writes.filter((w) => !isSettledGuardWrite(w));
    assert.deepEqual([...first.dryRuns].sort(), judgedWrites.sort(), 'each object the repository shapes was dry-run once');
    assert.equal(first.writes.filter(isSettledGuardWrite).length, 3, 'the LimitRange, NetworkPolicy and default ServiceAccount were not');
  });
});

describe('the namespace guards', () => {
  it('lifted by a workload of the preview through a Role it holds, they are put back within seconds without a push', async () => {
    const { name, headSha } = await openEnvironment(3, { 'src/app.txt': 'v1\n' });
    await waitForEnvironment(operator, name, 'deployed', (e) => e.status?.deployedSha === headSha, 90_000);
    const original = await operator.admin.get<KubeObject>({ ...guardKinds.quota, namespace: name });

    // What a preview could hold before the guard refused such Roles: rights over its own guards.
    await operator.admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'lift-guards', namespace: name },
      rules: [
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'delete'] },
        { apiGroups: [''], resources: ['resourcequotas', 'limitranges'], verbs: ['get', 'patch', 'delete'] },
      ],
    });
    await operator.admin.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'lift-guards', namespace: name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lift-guards' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: name }],
    });
    const workload = await asDefaultServiceAccount(name);
    const reconciles = operator.reporter.reportsFor(repo(), 3).length;
    try {
      const lifted = performance.now();
      await workload.delete({ ...guardKinds.networkPolicy, namespace: name });
      const raised = { spec: { hard: { 'limits.cpu': '1000', 'limits.memory': '10Ti' } } };
      await workload.patch({ ...guardKinds.quota, namespace: name }, 'merge', raised);
      await workload.delete({ ...guardKinds.limitRange, namespace: name });

      const restored = await waitFor(
        'all three guards put back',
        async () => {
          const guards = Object.values(guardKinds).map((k) => getOrUndefined(operator.admin, { ...k, namespace: name }));
          const [policy, quota, limits] = await Promise.all(guards);
          const hard = (quota?.spec as { hard?: Record<string, string> } | undefined)?.hard;
          return (
            policy && limits && hard?.['limits.cpu'] === (original.spec as { hard: Record<string, string> }).hard['limits.cpu'] && quota
          );
        },
        { timeoutMs: 15_000, intervalMs: 100 },
      );
      process.stderr.write(`guards put back ${(performance.now() - lifted).toFixed(0)} ms after they were lifted\n`);
      assert.deepEqual(restored.spec, original.spec, 'the quota is back as the operator rendered it');
    } finally {
      workload.close();
    }
    assert.equal((await getEnvironment(operator, name))?.spec.pullRequest.headSha, headSha, 'no push was needed');
    assert.ok(operator.reporter.reportsFor(repo(), 3).length > reconciles, 'the repair was a reconcile of the environment');

    // Idle again: reconciles write nothing, dry-run nothing.
    await operator.cluster.audit.settle();
    const mark = operator.cluster.audit.mark();
    const before = operator.reporter.reportsFor(repo(), 3).length;
    for (let i = 1; i <= 3; i++) {
      operator.controller.enqueue(name);
      await waitFor(`reconcile ${i}`, () => operator.reporter.reportsFor(repo(), 3).length >= before + i);
    }
    await operator.cluster.audit.settle();
    // Its namespace, what is in it, and the PreviewEnvironment itself (all named after it).
    const writes = operator.cluster.audit
      .writes(mark, { user: operator.identity.username, excludeDryRun: false })
      .filter((e) => e.objectRef?.namespace === name || e.objectRef?.name === name);
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.requestURI}`),
      [],
      'an unchanged reconcile makes no write and no dry run',
    );
  });
});
