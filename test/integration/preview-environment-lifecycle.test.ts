// A PreviewEnvironment's life against the real control plane and real git repositories:
// created → Ready with its URL; idle → no writes; a new commit → re-rendered, pruned, moved;
// its namespace deleted by hand → recreated; deleted → namespace gone, finalizer removed,
// GitHub told. The Algorithm and Database controllers run too (scoped to the namespace), and
// the cluster's real cert-manager issues the Certificate from its test CA.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { previewEnvironmentFinalizer } from '../../src/controllers/preview-environment.js';
import type { KubeObject, Logger } from '../../src/kube/index.js';
import type { GitRepository } from '../support/git-repository.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  getEnvironment,
  namesOf,
  namespaceExists,
  previewDomain,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  startWorkloadControllers,
  previewYamlHost,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

const debugLogger: Logger = Object.fromEntries(
  ['debug', 'info', 'warn', 'error'].map((level) => [
    level,
    (fields: object, message?: string) => {
      process.stderr.write(`${new Date().toISOString()} ${level} ${message ?? ''} ${JSON.stringify(fields)}\n`);
    },
  ]),
) as unknown as Logger;

let operator: PreviewOperator;
let repository: GitRepository;
let stopWorkloads: (() => Promise<void>) | undefined;
const pr = 7;
let name: string;
let headSha: string;

before(async () => {
  // A short resync: "idle" below means several real resyncs, not a hand-made enqueue.
  operator = await startPreviewOperator({
    resyncPeriodMs: 1000,
    // PREVIEW_DEBUG=1 prints the controller's log (with per-step timings of each reconcile).
    ...(process.env.PREVIEW_DEBUG ? { logger: debugLogger } : {}),
  });
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml(), 'README.md': 'app\n' });
});
after(async () => {
  await stopWorkloads?.();
  await operator?.stop();
  await repository?.cleanup();
});

const repo = () => ({ owner: repository.owner, name: repository.repo });

describe('a PreviewEnvironment from creation to deletion', () => {
  it('creates the namespace with every object and becomes Ready with its URL; the reporter saw deploying then ready', async () => {
    headSha = await repository.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'src/app.txt': 'v1\n' } });
    name = `pr-${pr}-${repository.repo}`;
    stopWorkloads = await startWorkloadControllers(operator, name);
    const created = performance.now();
    const auditMark = operator.cluster.audit.mark();
    await applyEnvironment(operator, { repository, pullRequest: pr, headSha });

    const deployed = await waitForEnvironment(operator, name, 'objects applied', (e) => e.status?.deployedSha === headSha);
    const applied = performance.now();
    assert.equal(deployed.status?.namespace, name);
    assert.ok(deployed.metadata.finalizers?.includes(previewEnvironmentFinalizer), 'the finalizer is set');

    const namespace = await operator.admin.get({ apiVersion: 'v1', kind: 'Namespace', name });
    assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
    assert.equal(namespace.metadata.labels?.['preview.alien6.io/environment'], name);
    assert.deepEqual(
      namespace.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
      [['PreviewEnvironment', name, true]],
    );
    const expected: [string, string, string[]][] = [
      ['ai.alien6.io/v1', 'Algorithm', ['api']],
      ['mycompany.com/v1', 'Database', ['db']],
      ['cert-manager.io/v1', 'Certificate', ['preview-tls']],
      ['networking.k8s.io/v1', 'Ingress', ['preview']],
      ['v1', 'ResourceQuota', ['preview-quota']],
      ['v1', 'LimitRange', ['preview-defaults']],
      ['networking.k8s.io/v1', 'NetworkPolicy', ['preview-isolation']],
    ];
    for (const [apiVersion, kind, names] of expected) {
      assert.deepEqual(await namesOf(operator, { apiVersion, kind }, name), names, `${kind} in the namespace`);
    }
    const ingress = await operator.admin.get({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: name, name: 'preview' });
    const host = previewYamlHost({ owner: repository.owner, name: repository.repo }, pr, previewDomain);
    assert.equal((ingress.spec as { rules: { host: string }[] }).rules[0]!.host, host);

    // cert-manager, the Algorithm and the Database controllers are real.
    const ready = await waitForEnvironment(operator, name, 'Ready', (e) => e.status?.phase === 'Ready', 90_000);
    const readyAt = performance.now();
    process.stderr.write(
      `PreviewEnvironment created → objects applied ${(applied - created).toFixed(0)} ms, → Ready ${(readyAt - created).toFixed(0)} ms\n`,
    );
    assert.equal(ready.status?.url, `https://${host}`);
    assert.equal(ready.status?.retryCount, 0);
    assert.deepEqual(
      ready.status?.resources?.map((r) => [r.kind, r.name, r.ready]),
      [
        ['Algorithm', 'api', true],
        ['Database', 'db', true],
        ['Certificate', 'preview-tls', true],
        ['Ingress', 'preview', true],
      ],
    );
    const conditions = Object.fromEntries((ready.status?.conditions ?? []).map((c) => [c.type, c.status]));
    assert.deepEqual(conditions, {
      Ready: 'True',
      ConfigValid: 'True',
      PolicyCompliant: 'True',
      CertificateReady: 'True',
      Reconciled: 'True',
      // kstatus: nothing under way, nothing stuck.
      Reconciling: 'False',
      Stalled: 'False',
    });
    assert.ok(ready.status?.expiresAt && ready.status.lastDeployedAt, 'expiry is set from the deployment');
    assert.equal(
      new Date(ready.status.expiresAt).getTime() - new Date(ready.status.lastDeployedAt).getTime(),
      72 * 3600_000,
      'default TTL 72h',
    );

    const states = operator.reporter.statesFor(repo(), pr);
    assert.deepEqual(states, ['deploying', 'ready'], `reported states: ${states}`);
    // Progress is paced (written and reported once per 10 s while deploying), however often the resources changed.
    const deploying = operator.reporter.reportsFor(repo(), pr).filter((r) => r.input.state === 'deploying').length;
    const allowed = 1 + Math.floor((readyAt - created) / 10_000);
    assert.ok(deploying <= allowed, `${deploying} deploying reports in ${((readyAt - created) / 1000).toFixed(1)} s; at most ${allowed}`);
    await operator.cluster.audit.settle();
    const statusWrites = operator.cluster.audit
      .writes(auditMark, { user: operator.identity.username, resource: 'previewenvironments' })
      .filter((w) => w.objectRef?.name === name && w.objectRef.subresource === 'status').length;
    // Deploying (before rendering), applied, Ready — and the paced progress in between.
    assert.ok(statusWrites <= allowed + 2, `${statusWrites} status writes; at most ${allowed + 2}`);
    const last = operator.reporter.lastFor(repo(), pr)!;
    assert.equal(last.input.url, `https://${host}`);
    assert.equal(last.input.deployedSha, headSha);
    assert.ok(
      ready.status?.github?.commentId && ready.status.github.deploymentId && ready.status.github.lastCommentHash,
      'the GitHub ids are kept in status',
    );
  });

  it('makes no write at all while nothing changes (several resyncs)', async () => {
    await operator.cluster.audit.settle();
    const reportsBefore = operator.reporter.reportsFor(repo(), pr).length;
    const mark = operator.cluster.audit.mark();
    // The resync reconciles it every second; three of them, however late a busy machine runs them.
    await waitFor('three resyncs of the environment', async () => operator.reporter.reportsFor(repo(), pr).length - reportsBefore >= 3, {
      timeoutMs: 30_000,
    });
    await operator.cluster.audit.settle();
    const writes = operator.cluster.audit.writes(mark, { user: operator.identity.username });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.requestURI}`),
      [],
      'an unchanged environment is reconciled with zero writes',
    );
    const githubWrites = operator.reporter
      .reportsFor(repo(), pr)
      .slice(reportsBefore)
      .flatMap((r) => r.writes);
    assert.deepEqual(githubWrites, [], 'and nothing is sent to GitHub');
  });

  it('a new head commit whose configuration drops the database: Database pruned, algorithm updated, deployedSha moves', async () => {
    const newSha = await repository.pushToPullRequest(pr, {
      '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:1.1', database: false }),
    });
    await applyEnvironment(operator, { repository, pullRequest: pr, headSha: newSha });
    const moved = await waitForEnvironment(
      operator,
      name,
      'the new commit deployed and Ready',
      (e) => e.status?.deployedSha === newSha && e.status.phase === 'Ready',
      90_000,
    );
    assert.deepEqual(await namesOf(operator, { apiVersion: 'mycompany.com/v1', kind: 'Database' }, name), [], 'the Database was pruned');
    const algorithm = await operator.admin.get<KubeObject>({
      apiVersion: 'ai.alien6.io/v1',
      kind: 'Algorithm',
      namespace: name,
      name: 'api',
    });
    assert.equal((algorithm.spec as { image: string }).image, 'registry.example.com/team/api:1.1');
    assert.deepEqual(
      moved.status?.resources?.map((r) => r.kind),
      ['Algorithm', 'Certificate', 'Ingress'],
    );
    assert.notEqual(moved.status?.lastDeployedAt, undefined);
    const last = operator.reporter.lastFor(repo(), pr)!;
    assert.equal(last.input.deployedSha, newSha);
    assert.equal(last.input.headSha, newSha);
    headSha = newSha;
  });

  it('a namespace deleted by hand while the environment exists is recreated', async () => {
    const before = await operator.admin.get({ apiVersion: 'v1', kind: 'Namespace', name });
    await operator.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name });
    const recreated = await waitFor(
      'the namespace to be recreated',
      async () => {
        const ns = await operator.admin.get({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => undefined);
        return ns && ns.metadata.uid !== before.metadata.uid && !ns.metadata.deletionTimestamp ? ns : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.equal(recreated.metadata.labels?.['preview.alien6.io/environment'], name);
    await waitForEnvironment(operator, name, 'Ready again', (e) => e.status?.phase === 'Ready' && e.status.deployedSha === headSha, 90_000);
    assert.deepEqual(await namesOf(operator, { apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm' }, name), ['api']);
  });

  it('deleting the PreviewEnvironment removes the namespace, then the finalizer; the reporter saw destroyed', async () => {
    await deleteEnvironment(operator, name);
    await waitFor('the PreviewEnvironment to be gone', async () => (await getEnvironment(operator, name)) === undefined, {
      timeoutMs: 90_000,
    });
    assert.equal(await namespaceExists(operator, name), false, 'the namespace is gone before the finalizer is removed');
    const last = operator.reporter.lastFor(repo(), pr)!;
    assert.equal(last.input.state, 'destroyed');
    assert.ok(operator.reporter.statesFor(repo(), pr).includes('destroyed'));
  });
});
