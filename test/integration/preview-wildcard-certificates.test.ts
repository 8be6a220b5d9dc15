// The wildcard TLS mode against the real cert-manager of the local cluster: one Certificate for
// `*.<domain>` in the operator's namespace, issued from the test CA, serves every preview. Two
// previews share it (the same serial), each namespace holds the operator's copy, the Ingress
// serves it, no per-preview Certificate exists, and the URL is https:// once the copy covers the
// host. A renewal of the wildcard is copied into every namespace — one write per copy — without a
// redeploy, a status write or a new comment. Until the wildcard certificate exists, the
// environment says so and reports no URL. No test writes a Certificate's status to fake an issuance.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { wildcardTlsSecretName } from '../../constructs/index.js';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';
import type { KubeObject, ObjectRef } from '../../src/kube/index.js';
import { testCaIssuer, testCaSecret } from '../cluster/cert-manager.js';
import type { GitRepository } from '../support/git-repository.js';
import { createNamespace, testCluster, uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  getEnvironment,
  namesOf,
  previewDomain,
  previewRepository,
  previewYaml,
  startPreviewOperator,
  startWorkloadControllers,
  previewYamlHost,
  waitForEnvironment,
  type PreviewOperator,
} from './preview-operator-harness.js';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}
type CertificateObject = KubeObject & { status?: { revision?: number; conditions?: Condition[] } };
type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };

const certificateKind = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate' };
const operatorNamespace = uniqueName('preview-operator');
const wildcardSecret = { namespace: operatorNamespace, name: 'wildcard-tls' };
/** Named by the second operator, issued only once its test creates the Certificate. */
const lateSecret = { namespace: operatorNamespace, name: 'late-wildcard-tls' };

let operator: PreviewOperator;
let lateOperator: PreviewOperator;
const repositories: GitRepository[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

function condition(obj: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

/** The wildcard Certificate the chart creates in the operator's namespace (templates/wildcard-certificate.yaml). */
function wildcardCertificate(name: string, secretName: string): KubeObject {
  return {
    ...certificateKind,
    metadata: { name, namespace: operatorNamespace },
    spec: {
      secretName,
      commonName: `*.${previewDomain}`,
      dnsNames: [`*.${previewDomain}`],
      issuerRef: { name: testCaIssuer, kind: 'ClusterIssuer', group: 'cert-manager.io' },
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    },
  };
}

async function issued(on: PreviewOperator, name: string): Promise<CertificateObject> {
  const ref = { ...certificateKind, namespace: operatorNamespace, name };
  return waitFor(
    `cert-manager to issue ${name}`,
    async () => {
      const live = await on.admin.get<CertificateObject>(ref).catch(() => undefined);
      return condition(live, 'Ready')?.status === 'True' ? live : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
}

async function secretCertificate(on: PreviewOperator, ref: { namespace: string; name: string }): Promise<X509Certificate> {
  const secret = await on.admin.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', ...ref });
  return new X509Certificate(Buffer.from(secret.data!['tls.crt']!, 'base64'));
}

/** A pull request of a new repository (one algorithm, no database), its environment applied. */
async function openPreview(on: PreviewOperator, pr: number): Promise<{ name: string; repository: GitRepository }> {
  const repository = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }), 'README.md': 'app\n' });
  repositories.push(repository);
  const headSha = await repository.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'src/app.txt': 'v1\n' } });
  const name = `pr-${pr}-${repository.repo}`;
  const stopWorkloads = await startWorkloadControllers(on, name);
  cleanups.push(stopWorkloads, async () => {
    await deleteEnvironment(on, name);
    await waitFor(`${name} to be gone`, async () => (await getEnvironment(on, name)) === undefined, { timeoutMs: 90_000 });
  });
  await applyEnvironment(on, { repository, pullRequest: pr, headSha });
  return { name, repository };
}

before(async () => {
  const cluster = await testCluster();
  await createNamespace(cluster.kubeConfig, operatorNamespace);
  // A short resync: the renewal below is watched through several real reconciles.
  const wildcard = { tlsMode: 'wildcard' as const, resyncPeriodMs: 1000 };
  operator = await startPreviewOperator({ ...wildcard, tlsWildcardSecret: wildcardSecret });
  lateOperator = await startPreviewOperator({ ...wildcard, tlsWildcardSecret: lateSecret });
  await operator.admin.apply(wildcardCertificate('wildcard', wildcardSecret.name));
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await operator?.stop();
  await lateOperator?.stop();
  await operator?.admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${operatorNamespace}` }).catch(() => {});
  for (const repository of repositories) await repository.cleanup();
});

describe('one wildcard certificate shared by every preview', () => {
  const previews: { name: string; repository: GitRepository; pr: number }[] = [];
  const copyRef = (namespace: string): ObjectRef => ({ apiVersion: 'v1', kind: 'Secret', namespace, name: wildcardTlsSecretName });

  it('two previews serve the same certificate, copied into each namespace; no per-preview Certificate exists', async () => {
    await issued(operator, 'wildcard');
    const source = await secretCertificate(operator, wildcardSecret);
    const ca = await secretCertificate(operator, testCaSecret);
    assert.equal(source.subjectAltName, `DNS:*.${previewDomain}`);
    assert.ok(source.checkIssued(ca) && source.verify(ca.publicKey), 'issued by the test CA');
    for (const pr of [31, 32]) previews.push({ ...(await openPreview(operator, pr)), pr });

    for (const { name, repository, pr } of previews) {
      const host = previewYamlHost({ owner: repository.owner, name: repository.repo }, pr, previewDomain);
      const ready = await waitForEnvironment(operator, name, 'Ready', (e) => e.status?.phase === 'Ready', 90_000);
      assert.equal(ready.status?.url, `https://${host}`);
      assert.equal(condition(ready, 'CertificateReady')?.status, 'True');
      assert.match(
        condition(ready, 'CertificateReady')?.message ?? '',
        new RegExp(`copy of ${operatorNamespace}/wildcard-tls, covers ${host}`),
      );
      assert.equal(operator.reporter.lastFor({ owner: repository.owner, name: repository.repo }, pr)?.input.url, `https://${host}`);

      const copy = await operator.admin.get<SecretObject>(copyRef(name));
      assert.equal(copy.type, 'kubernetes.io/tls');
      const leaf = await secretCertificate(operator, { namespace: name, name: wildcardTlsSecretName });
      assert.equal(leaf.serialNumber, source.serialNumber, 'the one wildcard certificate, not one of its own');
      assert.equal(leaf.checkHost(host), `*.${previewDomain}`, `the wildcard covers ${host}`);
      const sourceSecret = await operator.admin.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', ...wildcardSecret });
      assert.equal(copy.data!['tls.key'], sourceSecret.data!['tls.key'], 'its key');
      assert.equal(copy.metadata.labels?.['preview.alien6.io/environment'], undefined, "not the rendering's: prune leaves it");

      const ingress = await operator.admin.get<KubeObject & { spec: { tls?: unknown } }>({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        namespace: name,
        name: 'preview',
      });
      assert.deepEqual(ingress.spec.tls, [{ hosts: [host], secretName: wildcardTlsSecretName }]);
      assert.deepEqual(await namesOf(operator, certificateKind, name), [], 'no per-preview Certificate');
    }
  });

  it('a renewal is copied into every namespace: one write per copy, no redeploy, no status write, no comment', async () => {
    const ref = { ...certificateKind, namespace: operatorNamespace, name: 'wildcard' };
    const before = await operator.admin.get<CertificateObject>(ref);
    const oldSerial = (await secretCertificate(operator, wildcardSecret)).serialNumber;
    const environmentsBefore = await Promise.all(previews.map((p) => getEnvironment(operator, p.name)));
    const reportsBefore = previews.map(
      (p) => operator.reporter.reportsFor({ owner: p.repository.owner, name: p.repository.repo }, p.pr).length,
    );
    await operator.cluster.audit.settle();
    const mark = operator.cluster.audit.mark();

    // What `cmctl renew` does: the Issuing condition (cert-manager's trigger sets it when a certificate is due).
    const issuing: Condition = {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      observedGeneration: before.metadata.generation,
    };
    await operator.admin.patch(
      ref,
      'merge',
      { status: { conditions: [...(before.status?.conditions ?? []), issuing] } },
      { subresource: 'status' },
    );
    const renewedAt = performance.now();
    const newSerial = await waitFor(
      'cert-manager to re-issue the wildcard certificate',
      async () => {
        const serial = (await secretCertificate(operator, wildcardSecret)).serialNumber;
        return serial !== oldSerial ? serial : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    for (const { name } of previews) {
      await waitFor(
        `${name}'s copy to hold the renewed certificate`,
        async () => {
          return (await secretCertificate(operator, { namespace: name, name: wildcardTlsSecretName })).serialNumber === newSerial;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
    }
    process.stderr.write(
      `wildcard renewal triggered → copied into ${previews.length} namespaces: ${(performance.now() - renewedAt).toFixed(0)} ms\n`,
    );

    // The resync reconciles each environment every second; three of them after the renewal.
    const counts = () =>
      previews.map((p) => operator.reporter.reportsFor({ owner: p.repository.owner, name: p.repository.repo }, p.pr).length);
    const afterRenewal = counts();
    await waitFor('three resyncs after the renewal', () => counts().every((n, i) => n - afterRenewal[i]! >= 3), { timeoutMs: 30_000 });
    await operator.cluster.audit.settle();
    const writes = operator.cluster.audit
      .writes(mark, { user: operator.identity.username })
      .map((w) => `${w.verb} ${w.requestURI.split('?')[0]}`);
    const copyWrites = previews.map((p) => `patch /api/v1/namespaces/${p.name}/secrets/${wildcardTlsSecretName}`).sort();
    assert.deepEqual(writes.sort(), copyWrites, 'one apply of each copy, and nothing else: no rendering, no status');
    previews.forEach((p, i) => {
      const reports = operator.reporter.reportsFor({ owner: p.repository.owner, name: p.repository.repo }, p.pr).slice(reportsBefore[i]);
      assert.deepEqual(
        reports.flatMap((r) => r.writes),
        [],
        `${p.name}: no comment, deployment or check written`,
      );
    });
    for (const [i, { name }] of previews.entries()) {
      const now = await getEnvironment(operator, name);
      assert.equal(now?.status?.phase, 'Ready');
      assert.equal(now?.status?.lastDeployedAt, environmentsBefore[i]?.status?.lastDeployedAt, 'not redeployed');
    }
  });
});

describe('a wildcard certificate not issued yet', () => {
  const pr = 33;

  it('is named in the CertificateReady condition; no URL is reported until its copy covers the host', async () => {
    const { name, repository } = await openPreview(lateOperator, pr);
    const host = previewYamlHost({ owner: repository.owner, name: repository.repo }, pr, previewDomain);
    const namesSecret = (e: EnvironmentObject) => {
      const certificateReady = condition(e, 'CertificateReady');
      return (
        certificateReady?.status === 'False' && (certificateReady.message ?? '').includes(`${lateSecret.namespace}/${lateSecret.name}`)
      );
    };
    const waiting = await waitForEnvironment(lateOperator, name, 'CertificateReady naming the wildcard Secret', namesSecret, 90_000);
    assert.notEqual(waiting.status?.phase, 'Ready');
    assert.match(condition(waiting, 'CertificateReady')?.message ?? '', /it does not exist \(is its Certificate issued\?\)/);
    const repo = { owner: repository.owner, name: repository.repo };
    const last = await waitFor(
      'a comment naming the Secret',
      () => {
        const report = lateOperator.reporter.lastFor(repo, pr);
        return report?.comment.includes(lateSecret.name) ? report : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.notEqual(last.input.state, 'ready');
    assert.doesNotMatch(last.comment, /\*\*URL:\*\*/, 'no URL while the certificate is not there');

    // The chart's Certificate, issued now: the operator copies it and the preview becomes Ready.
    await lateOperator.admin.apply(wildcardCertificate('late-wildcard', lateSecret.name));
    const ready = await waitForEnvironment(
      lateOperator,
      name,
      'Ready once the wildcard is issued',
      (e) => e.status?.phase === 'Ready',
      120_000,
    );
    assert.equal(ready.status?.url, `https://${host}`);
    const leaf = await secretCertificate(lateOperator, { namespace: name, name: wildcardTlsSecretName });
    assert.equal(leaf.serialNumber, (await secretCertificate(lateOperator, lateSecret)).serialNumber);
  });
});
