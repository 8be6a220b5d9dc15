// What a repository can get wrong, and what it must not get away with: an invalid
// configuration, `.preview/main.ts` that misbehaves (stopped by the sandbox; never run for an
// untrusted pull request), a rendering the policy refuses — each reported, nothing applied
// (the audit log shows the operator wrote nothing but the PreviewEnvironment's own status,
// finalizer and Events), no crash loop; and a broken environment never delays another.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ReportError, type EnvironmentReport } from '../../src/github/reporting/reporter.js';
import type { AuditEvent } from '../cluster/audit-log.js';
import type { GitRepository } from '../support/git-repository.js';
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { Informer } from '../../src/kube/informer.js';
import { silentLogger } from '../../src/kube/logger.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  namespaceExists,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

let operator: PreviewOperator;
let repository: GitRepository;

before(async () => {
  operator = await startPreviewOperator();
  repository = await previewRepository({ '.preview/preview.yaml': previewYaml() });
});
after(async () => {
  await operator?.stop();
  await repository?.cleanup();
});

const repo = () => ({ owner: repository.owner, name: repository.repo });
const condition = (env: { status?: { conditions?: { type: string; status: string; reason: string; message: string }[] } }, type: string) =>
  env.status?.conditions?.find((c) => c.type === type);

/** Environments of earlier tests that deployed: their namespaces see writes of their own. */
const deployedEnvironments: string[] = [];

/**
 * Writes by the operator other than to PreviewEnvironments (status, finalizer), Events and the
 * namespaces of environments that deployed in earlier tests.
 */
function writesBesidesOwnStatus(events: AuditEvent[]): string[] {
  return events
    .filter((e) => e.objectRef?.resource !== 'previewenvironments' && e.objectRef?.resource !== 'events')
    .filter((e) => {
      const ref = e.objectRef ?? {};
      const namespace = ref.resource === 'namespaces' ? ref.name : ref.namespace;
      return !deployedEnvironments.includes(namespace ?? '');
    })
    .map((e) => `${e.verb} ${e.requestURI}`);
}

async function openEnvironment(pullRequest: number, files: Record<string, string>, authorAssociation = 'MEMBER'): Promise<string> {
  const headSha = await repository.openPullRequest(pullRequest, { headBranch: `feature-${pullRequest}`, files });
  return applyEnvironment(operator, { repository, pullRequest, headSha, authorAssociation });
}

describe('failures a repository can cause', () => {
  it('an invalid .preview/preview.yaml: every error with its path in a condition and the report, nothing applied, no crash loop', async () => {
    const mark = operator.cluster.audit.mark();
    const name = await openEnvironment(2, {
      '.preview/preview.yaml': [
        'version: 1',
        'algorithms:',
        '  - name: API_bad',
        '    image: "has space"',
        '    replicas: -1',
        'databases:',
        '  - name: db',
        '    engine: oracle',
        '    version: "16"',
        '    storage: 1Gi',
        '',
      ].join('\n'),
    });
    const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed');
    const configValid = condition(failed, 'ConfigValid')!;
    assert.equal(configValid.status, 'False');
    assert.equal(configValid.reason, 'ConfigInvalid');
    for (const path of ['/algorithms/0/name', '/algorithms/0/image', '/algorithms/0/replicas', '/databases/0/engine']) {
      assert.ok(configValid.message.includes(path), `the condition names ${path}: ${configValid.message}`);
    }
    const report = await operator.reporter.waitForState(repo(), 2, 'failed');
    for (const path of ['/algorithms/0/name', '/algorithms/0/image', '/algorithms/0/replicas', '/databases/0/engine']) {
      assert.ok(
        report.input.reasons.some((r) => r.includes(path)),
        `the report names ${path}: ${report.input.reasons.join(' | ')}`,
      );
    }
    assert.equal(failed.status?.retryCount, 0, 'a configuration error is not retried');
    assert.equal(await namespaceExists(operator, name), false, 'nothing applied: no namespace');

    // No crash loop: reconciling again (as the resync does) changes and sends nothing.
    const reports = operator.reporter.reportsFor(repo(), 2).length;
    for (let i = 1; i <= 3; i++) {
      operator.controller.enqueue(name);
      await waitFor(`reconcile ${i}`, () => operator.reporter.reportsFor(repo(), 2).length >= reports + i);
    }
    await operator.cluster.audit.settle();
    assert.deepEqual(writesBesidesOwnStatus(operator.cluster.audit.writes(mark, { user: operator.identity.username })), []);
    assert.deepEqual(
      operator.reporter
        .reportsFor(repo(), 2)
        .slice(reports)
        .flatMap((r) => r.writes),
      [],
      'nothing new sent to GitHub',
    );
  });

  it('.preview/main.ts that reads process.env, reads outside the checkout, spawns a process or loops forever is stopped and reported; nothing applied', async () => {
    const mark = operator.cluster.audit.mark();
    const programs: Record<number, [string, RegExp]> = {
      11: [
        `export default function (): void {
          if (!process.env.KUBECONFIG || !process.env.GITHUB_TOKEN) throw new Error('no credentials in ' + JSON.stringify(process.env));
        }`,
        /\.preview\/main\.ts threw Error: no credentials in \{\}/,
      ],
      12: [
        `import { readFileSync } from 'node:fs';
        export default function (): void { readFileSync('/etc/passwd', 'utf8'); }`,
        /tried to read \/etc\/passwd; it may read only files of the repository/,
      ],
      13: [
        `import { execSync } from 'node:child_process';
        export default function (): void { execSync('id'); }`,
        /tried to start a process/,
      ],
      14: ['export default function (): void { for (;;) {} }', /did not finish within 15 s and was stopped/],
    };
    const names = new Map<number, string>();
    for (const [pr, [program]] of Object.entries(programs))
      names.set(Number(pr), await openEnvironment(Number(pr), { '.preview/main.ts': program }));
    for (const [pr, [, expected]] of Object.entries(programs)) {
      const name = names.get(Number(pr))!;
      const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed', 60_000);
      const configValid = condition(failed, 'ConfigValid')!;
      assert.equal(configValid.reason, 'SandboxFailed', `PR ${pr}: ${configValid.message}`);
      assert.match(configValid.message, expected);
      const report = operator.reporter.lastFor(repo(), Number(pr))!;
      assert.equal(report.input.state, 'failed');
      assert.ok(
        report.input.reasons.some((r) => expected.test(r)),
        `PR ${pr} reported: ${report.input.reasons.join(' | ')}`,
      );
      assert.equal(await namespaceExists(operator, name), false, `PR ${pr}: nothing applied`);
    }
    await operator.cluster.audit.settle();
    assert.deepEqual(writesBesidesOwnStatus(operator.cluster.audit.writes(mark, { user: operator.identity.username })), []);
  });

  it("the same main.ts from an untrusted pull request is never executed: the base branch's configuration is rendered", async () => {
    const name = await openEnvironment(
      15,
      {
        // Run, it would fail the environment (it throws in the sandbox's empty environment).
        '.preview/main.ts': `export default function (): void { if (!process.env.GITHUB_TOKEN) throw new Error('executed'); }`,
        '.preview/preview.yaml': previewYaml({ image: 'registry.example.com/team/api:pr-15', database: false }),
      },
      'CONTRIBUTOR',
    );
    const deployed = await waitForEnvironment(
      operator,
      name,
      'deployed',
      (e) => e.status?.deployedSha !== undefined || e.status?.phase === 'Failed',
    );
    deployedEnvironments.push(name);
    assert.notEqual(deployed.status?.phase, 'Failed', condition(deployed, 'Ready')?.message);
    assert.match(
      condition(deployed, 'ConfigValid')!.message,
      /configuration of the base branch main \(untrusted pull request\), rendered by the construct library/,
    );
    const algorithm = await operator.admin.get({ apiVersion: 'ai.alien6.io/v1', kind: 'Algorithm', namespace: name, name: 'api' });
    assert.equal((algorithm.spec as { image: string }).image, 'registry.example.com/team/api:pr-15', 'the image tag comes from the PR');
    const databases = await operator.admin.list({ apiVersion: 'mycompany.com/v1', kind: 'Database' }, { namespace: name });
    assert.deepEqual(
      databases.items.map((d) => d.metadata.name),
      ['db'],
      'the rest comes from the base branch',
    );
    const report = operator.reporter.lastFor(repo(), 15)!;
    assert.ok(
      report.input.reasons.some((r) => r.includes('databases: changes from untrusted pull requests are not applied')),
      report.input.reasons.join(' | '),
    );
  });

  it('rendered objects in another namespace, a ClusterRoleBinding or a privileged pod are refused before any write', async () => {
    const mark = operator.cluster.audit.mark();
    const name = await openEnvironment(16, {
      '.preview/main.ts': `
        import { kplus, type PreviewEnvironmentChart } from 'preview-operator/constructs';
        export default function (chart: PreviewEnvironmentChart): void {
          new kplus.k8s.KubeConfigMap(chart, 'planted', { metadata: { name: 'planted', namespace: 'kube-system' }, data: { a: 'b' } });
          new kplus.k8s.KubeClusterRoleBinding(chart, 'root', {
            metadata: { name: 'preview-root-${repository.repo}' },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
            subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: chart.identity.namespace }],
          });
          new kplus.k8s.KubeDeployment(chart, 'miner', {
            metadata: { name: 'miner' },
            spec: {
              selector: { matchLabels: { app: 'miner' } },
              template: {
                metadata: { labels: { app: 'miner' } },
                spec: { containers: [{ name: 'miner', image: 'miner:1', securityContext: {
                  privileged: true, allowPrivilegeEscalation: false, runAsNonRoot: true,
                  seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] },
                } }] },
              },
            },
          });
        }`,
    });
    const failed = await waitForEnvironment(operator, name, 'Failed', (e) => e.status?.phase === 'Failed', 60_000);
    const policy = condition(failed, 'PolicyCompliant')!;
    assert.equal(policy.reason, 'PolicyViolation');
    assert.match(policy.message, /ConfigMap kube-system\/planted: it targets namespace "kube-system".*\[other-namespace\]/);
    assert.match(policy.message, /ClusterRoleBinding\.rbac\.authorization\.k8s\.io .*preview-root-.*is cluster-scoped.*\[cluster-scoped\]/);
    assert.match(
      policy.message,
      /Deployment\.apps .*\/miner: spec\.template\.spec\.containers\[0\]\.securityContext\.privileged: container "miner" must not be privileged.*\[pod-security\]/,
    );
    const report = operator.reporter.lastFor(repo(), 16)!;
    assert.equal(report.input.state, 'failed');
    assert.equal(report.input.reasons.length, 3, report.input.reasons.join(' | '));

    await operator.cluster.audit.settle();
    assert.deepEqual(
      writesBesidesOwnStatus(operator.cluster.audit.writes(mark, { user: operator.identity.username })),
      [],
      'the audit log shows no write',
    );
    assert.equal(await namespaceExists(operator, name), false);
    const bindings = await operator.admin.list({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding' });
    assert.equal(
      bindings.items.some((b) => b.metadata.name === `preview-root-${repository.repo}`),
      false,
    );
  });

  it('one broken environment never delays another', async () => {
    const started = performance.now();
    const broken = await openEnvironment(20, { '.preview/main.ts': 'export default function (): void { for (;;) {} }' });
    const healthy = await openEnvironment(21, { 'src/app.txt': 'fine\n' });
    await waitForEnvironment(operator, healthy, 'the healthy environment applied', (e) => e.status?.deployedSha !== undefined);
    const healthyAt = performance.now() - started;
    const brokenNow = await operator.admin.get({ apiVersion: 'preview.alien6.io/v1alpha1', kind: 'PreviewEnvironment', name: broken });
    assert.notEqual((brokenNow.status as { phase?: string } | undefined)?.phase, 'Failed', 'the broken one is still in its sandbox');
    await waitForEnvironment(operator, broken, 'the broken one failed', (e) => e.status?.phase === 'Failed');
    const brokenAt = performance.now() - started;
    process.stderr.write(
      `healthy environment applied after ${healthyAt.toFixed(0)} ms; the broken one failed after ${brokenAt.toFixed(0)} ms\n`,
    );
    assert.ok(healthyAt < brokenAt, 'the healthy environment did not wait for the broken one');
  });

  it('a GitHub outage: the part of the report that succeeded is kept in status, retried with backoff and counted', async () => {
    // The outage hits this pull request only (other environments of the file keep reporting).
    const reporter = operator.reporter;
    const report = reporter.report.bind(reporter);
    const failed: EnvironmentReport[] = [];
    reporter.report = async (input) => {
      if (input.pullRequest === 30 && failed.length < 2) {
        failed.push(structuredClone(input));
        throw new ReportError(
          'GitHub answered 502 for the deployment',
          { ...input.known, commentId: 4242, lastCommentHash: 'partial' },
          [],
        );
      }
      return report(input);
    };
    // Every version of the status, from a watch: the failed attempts and the recovery can all
    // happen between two polls, and the retry count is back to 0 once the report succeeds.
    const versions: EnvironmentObject[] = [];
    const watch = new Informer<EnvironmentObject>(operator.admin, previewEnvironmentKind, {
      labelSelector: `${operator.selector.key}=${operator.selector.value}`,
      logger: silentLogger,
    });
    watch.addHandler({ onAdd: (e) => versions.push(e), onUpdate: (_, e) => versions.push(e) });
    watch.start();
    await watch.waitForSync();
    const name = await openEnvironment(30, { 'src/app.txt': 'outage\n' });
    const retrying = await waitFor(
      `${name}: a retry counted`,
      async () => versions.find((e) => e.metadata.name === name && (e.status?.retryCount ?? 0) >= 1),
      { timeoutMs: 60_000, intervalMs: 50 },
    ).finally(() => watch.stop());
    assert.equal(retrying.status?.github?.commentId, 4242, 'the partial ids were persisted');
    assert.equal(condition(retrying, 'Reconciled')?.reason, 'ReportFailed');
    const recovered = await waitForEnvironment(
      operator,
      name,
      'reported after the outage',
      (e) => e.status?.retryCount === 0 && e.status.github?.deploymentId !== undefined,
    );
    assert.equal(recovered.status?.github?.commentId, 4242, 'the comment is edited, not created again');
    assert.equal(failed.length, 2);
    assert.equal(failed[1]!.known.commentId, 4242, 'the retry started from the persisted partial ids');
    const succeeded = reporter.reportsFor(repo(), 30);
    assert.equal(succeeded[0]!.input.known.commentId, 4242);
    assert.ok(!succeeded.some((a) => a.writes.includes('comment:create')), 'no second comment');
  });
});
