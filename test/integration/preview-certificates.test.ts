// A preview's TLS against the real cert-manager of the local cluster (test/cluster/cert-manager.ts):
// its Certificate becomes Ready because cert-manager issued it from the test CA, for exactly the
// preview's host; a renewal re-issues it without a redeploy or a new comment; a ClusterIssuer
// that does not exist is named in the environment's condition and comment, and the URL is not
// reported until it exists. No test writes a Certificate's status to fake an issuance.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { EnvironmentObject } from '../../src/controllers/preview-environment.js';
import type { KubeObject, ObjectRef } from '../../src/kube/index.js';
import { testCaSecret } from '../cluster/cert-manager.js';
import type { GitRepository } from '../support/git-repository.js';
import { uniqueName } from '../support/test-cluster.js';
import { waitFor } from '../support/wait.js';
import {
  applyEnvironment,
  deleteEnvironment,
  getEnvironment,
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
type CertificateObject = KubeObject & {
  spec: { secretName: string; dnsNames: string[] };
  status?: { revision?: number; conditions?: Condition[] };
};
type SecretObject = KubeObject & { data?: Record<string, string> };

const certificateRef = (namespace: string): ObjectRef => ({
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  namespace,
  name: 'preview-tls',
});
const fast = { timeoutMs: 60_000, intervalMs: 100 };
const missingIssuer = uniqueName('missing-issuer');

let operator: PreviewOperator;
let missingIssuerOperator: PreviewOperator;
const repositories: GitRepository[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

before(async () => {
  // A short resync: the renewal below is watched through several real reconciles.
  operator = await startPreviewOperator({ resyncPeriodMs: 1000 });
  missingIssuerOperator = await startPreviewOperator({ tlsIssuer: { name: missingIssuer, kind: 'ClusterIssuer' } });
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await operator?.stop();
  await missingIssuerOperator?.stop();
  for (const repository of repositories) await repository.cleanup();
});

/** A pull request of a new repository (one algorithm, no database), its environment applied; resolves to its name. */
async function openPreview(on: PreviewOperator, pr: number): Promise<{ name: string; repository: GitRepository; applied: number }> {
  const repository = await previewRepository({ '.preview/preview.yaml': previewYaml({ database: false }), 'README.md': 'app\n' });
  repositories.push(repository);
  const headSha = await repository.openPullRequest(pr, { headBranch: `feature-${pr}`, files: { 'src/app.txt': 'v1\n' } });
  const name = `pr-${pr}-${repository.repo}`;
  const stopWorkloads = await startWorkloadControllers(on, name);
  cleanups.push(stopWorkloads, async () => {
    await deleteEnvironment(on, name);
    await waitFor(`${name} to be gone`, async () => (await getEnvironment(on, name)) === undefined, { timeoutMs: 90_000 });
  });
  const applied = performance.now();
  await applyEnvironment(on, { repository, pullRequest: pr, headSha });
  return { name, repository, applied };
}

function condition(obj: { status?: { conditions?: Condition[] } } | undefined, type: string): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

async function certificate(on: PreviewOperator, namespace: string): Promise<CertificateObject | undefined> {
  return on.admin.get<CertificateObject>(certificateRef(namespace)).catch(() => undefined);
}

/** The first certificate of a PEM field of a Secret. */
async function secretCertificate(on: PreviewOperator, namespace: string, name: string, key = 'tls.crt'): Promise<X509Certificate> {
  const secret = await on.admin.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  return new X509Certificate(Buffer.from(secret.data![key]!, 'base64'));
}

describe('a preview certificate issued by the real cert-manager', () => {
  const pr = 21;
  let name: string;
  let repository: GitRepository;
  let host: string;

  it('becomes Ready through cert-manager; its Secret holds a certificate for exactly the host, chained to the test CA', async () => {
    const opened = await openPreview(operator, pr);
    ({ name, repository } = opened);
    host = previewYamlHost({ owner: repository.owner, name: repository.repo }, pr, previewDomain);
    const created = await waitFor('the Certificate to be created', () => certificate(operator, name), fast);
    const createdAt = performance.now();
    const issued = async () => condition(await certificate(operator, name), 'Ready')?.status === 'True';
    await waitFor('cert-manager to issue the Certificate', issued, fast);
    const issuedAt = performance.now();
    const since = (t: number) => `${(t - opened.applied).toFixed(0)} ms`;
    process.stderr.write(`PreviewEnvironment applied → Certificate created ${since(createdAt)}, → issued (Ready) ${since(issuedAt)}\n`);
    assert.deepEqual(created.spec.dnsNames, [host]);

    const ready = await waitForEnvironment(operator, name, 'Ready', (e) => e.status?.phase === 'Ready', 90_000);
    assert.equal(ready.status?.url, `https://${host}`);
    assert.equal(condition(ready, 'CertificateReady')?.status, 'True');
    assert.equal(operator.reporter.lastFor({ owner: repository.owner, name: repository.repo }, pr)?.input.url, `https://${host}`);

    const leaf = await secretCertificate(operator, name, created.spec.secretName);
    const ca = await secretCertificate(operator, testCaSecret.namespace, testCaSecret.name);
    assert.equal(leaf.subjectAltName, `DNS:${host}`, "exactly the preview's host, nothing else");
    assert.equal(leaf.ca, false);
    assert.ok(ca.ca, 'the test CA is a CA');
    assert.ok(leaf.checkIssued(ca), `issued by ${ca.subject}, not ${leaf.issuer}`);
    assert.ok(leaf.verify(ca.publicKey), "signed with the test CA's key");
    const caInSecret = await secretCertificate(operator, name, created.spec.secretName, 'ca.crt');
    assert.equal(caInSecret.fingerprint256, ca.fingerprint256, 'ca.crt is the test CA');
    const secretRef = { apiVersion: 'v1', kind: 'Secret', namespace: name, name: created.spec.secretName };
    const secret = await operator.admin.get<SecretObject>(secretRef);
    assert.ok(leaf.checkPrivateKey(createPrivateKey(Buffer.from(secret.data!['tls.key']!, 'base64'))), "tls.key is the certificate's key");
    const ingress = await operator.admin.get<KubeObject & { spec: { tls?: { hosts: string[]; secretName: string }[] } }>({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      namespace: name,
      name: 'preview',
    });
    assert.deepEqual(ingress.spec.tls, [{ hosts: [host], secretName: created.spec.secretName }]);
  });

  it('a renewal re-issues the certificate without a redeploy, a status write or a new comment', async () => {
    const repo = { owner: repository.owner, name: repository.repo };
    const before = await certificate(operator, name);
    const environmentBefore = await getEnvironment(operator, name);
    const oldLeaf = await secretCertificate(operator, name, before!.spec.secretName);
    const reportsBefore = operator.reporter.reportsFor(repo, pr).length;
    await operator.cluster.audit.settle();
    const mark = operator.cluster.audit.mark();

    // What `cmctl renew` does: the Issuing condition, which cert-manager's trigger controller
    // also sets when a certificate is due for renewal.
    const issuing: Condition = {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      observedGeneration: before!.metadata.generation,
    };
    const conditions = [...(before!.status?.conditions ?? []), issuing];
    await operator.admin.patch(certificateRef(name), 'merge', { status: { conditions } }, { subresource: 'status' });
    const renewed = await waitFor(
      'cert-manager to re-issue the certificate',
      async () => {
        const now = await certificate(operator, name);
        const done = (now?.status?.revision ?? 0) > (before!.status?.revision ?? 0) && !condition(now, 'Issuing');
        return done && condition(now, 'Ready')?.status === 'True' ? now : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const newLeaf = await secretCertificate(operator, name, renewed.spec.secretName);
    assert.notEqual(newLeaf.serialNumber, oldLeaf.serialNumber, 'a new certificate');
    assert.equal(newLeaf.subjectAltName, `DNS:${host}`);

    // The resync reconciles it every second; three of them after the renewal.
    const reportsAfterRenewal = operator.reporter.reportsFor(repo, pr).length;
    const resyncs = () => operator.reporter.reportsFor(repo, pr).length - reportsAfterRenewal;
    await waitFor('three resyncs after the renewal', () => resyncs() >= 3, { timeoutMs: 30_000 });
    await operator.cluster.audit.settle();
    const writes = operator.cluster.audit.writes(mark, { user: operator.identity.username });
    assert.deepEqual(
      writes.map((w) => `${w.verb} ${w.requestURI}`),
      [],
      'the operator wrote nothing: no apply, no status',
    );
    const githubWrites = operator.reporter
      .reportsFor(repo, pr)
      .slice(reportsBefore)
      .flatMap((r) => r.writes);
    assert.deepEqual(githubWrites, [], 'no comment, deployment or check written');
    const environmentAfter = await getEnvironment(operator, name);
    assert.equal(environmentAfter?.status?.phase, 'Ready');
    assert.equal(environmentAfter?.status?.lastDeployedAt, environmentBefore?.status?.lastDeployedAt, 'not redeployed');
  });
});

describe('a ClusterIssuer that does not exist', () => {
  const pr = 22;

  it('is named in the CertificateReady condition and the comment; the URL is not reported until it exists', async () => {
    const { name, repository } = await openPreview(missingIssuerOperator, pr);
    const repo = { owner: repository.owner, name: repository.repo };
    const namesIssuer = (e: EnvironmentObject) => {
      const certificateReady = condition(e, 'CertificateReady');
      const message = certificateReady?.message ?? '';
      return certificateReady?.status === 'False' && message.includes(`ClusterIssuer ${missingIssuer} does not exist`);
    };
    const waiting = await waitForEnvironment(missingIssuerOperator, name, `CertificateReady naming ${missingIssuer}`, namesIssuer, 90_000);
    assert.notEqual(waiting.status?.phase, 'Ready');
    assert.match(condition(waiting, 'Ready')?.message ?? '', new RegExp(missingIssuer));
    const last = await waitFor(
      'a comment naming the issuer',
      () => {
        const report = missingIssuerOperator.reporter.lastFor(repo, pr);
        return report?.comment.includes(missingIssuer) ? report : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.notEqual(last.input.state, 'ready');
    assert.doesNotMatch(last.comment, /\*\*URL:\*\*/, 'no URL while the certificate is not issued');

    // The issuer appears (backed by the test CA): cert-manager issues, the preview becomes Ready.
    const kind = { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer' };
    const spec = { ca: { secretName: testCaSecret.name } };
    await missingIssuerOperator.admin.apply({ ...kind, metadata: { name: missingIssuer }, spec });
    cleanups.push(() => missingIssuerOperator.admin.delete({ ...kind, name: missingIssuer }));
    const isReady = (e: EnvironmentObject) => e.status?.phase === 'Ready';
    const ready = await waitForEnvironment(missingIssuerOperator, name, 'Ready once the issuer exists', isReady, 120_000);
    assert.equal(ready.status?.url, `https://${previewYamlHost({ owner: repository.owner, name: repository.repo }, pr, previewDomain)}`);
  });
});
