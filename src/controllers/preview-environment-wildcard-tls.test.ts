// The wildcard TLS modes' step on a fake API server: the copy follows its source (written once
// per change, never while nothing changed), readiness says what the host is served from, and a
// copy left from a wildcard run is deleted in the other modes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { wildcardTlsSecretName, type PreviewTlsMode } from '../../constructs/index.js';
import { silentLogger } from '../kube/index.js';
import { FakeCluster } from '../../test/support/fake-cluster.js';
import { secretKind, wildcardCopyLabel, WildcardTls } from './preview-environment-wildcard-tls.js';

const pem = readFileSync(new URL('../../test/fixtures/tls/wildcard-preview-test.crt', import.meta.url), 'utf8');
const source = { namespace: 'preview-operator', name: 'wildcard-tls' };
const namespace = 'pr-7-shop';
const host = 'shop-pr-7.preview.test';
const now = new Date('2027-06-01T00:00:00Z');
const b64 = (text: string) => Buffer.from(text).toString('base64');

function setup(mode: PreviewTlsMode) {
  const cluster = new FakeCluster();
  const informers = { source: cluster.informer(secretKind), copies: cluster.informer(secretKind, { labelSelector: wildcardCopyLabel }) };
  const tls = new WildcardTls({ client: cluster.client(), informers, mode, secret: source, logger: silentLogger });
  const admin = cluster.client('cert-manager');
  const issue = (key: string) =>
    admin.apply({
      ...secretKind,
      metadata: source,
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64(pem), 'tls.key': b64(key) },
    });
  const copy = () =>
    cluster.get({ ...secretKind, namespace, name: wildcardTlsSecretName }) as { data?: Record<string, string> } | undefined;
  return { cluster, tls, issue, copy };
}

describe('the wildcard certificate in a preview namespace', () => {
  it('wildcard: copied once its Secret exists, again when it changes, never while it does not', async () => {
    const { cluster, tls, issue, copy } = setup('wildcard');
    assert.equal(await tls.keepCopy(namespace), undefined);
    const missing = await tls.readiness(host, now, undefined);
    assert.deepEqual(missing, {
      apiVersion: 'v1',
      kind: 'Secret',
      name: wildcardTlsSecretName,
      ready: false,
      message: 'copy of preview-operator/wildcard-tls: not copied: it does not exist (is its Certificate issued?)',
    });
    await issue('first key');
    let mark = cluster.writes.length;
    const copied = await tls.keepCopy(namespace);
    assert.deepEqual(cluster.writesSince(mark), [`apply Secret ${wildcardTlsSecretName}`]);
    assert.equal(copy()?.data?.['tls.key'], b64('first key'));
    assert.deepEqual(await tls.readiness(host, now, copied), {
      apiVersion: 'v1',
      kind: 'Secret',
      name: wildcardTlsSecretName,
      ready: true,
      message: `copy of preview-operator/wildcard-tls, covers ${host}`,
    });
    mark = cluster.writes.length;
    await tls.keepCopy(namespace);
    assert.deepEqual(cluster.writesSince(mark), [], 'unchanged: nothing written');

    await issue('renewed key');
    mark = cluster.writes.length;
    await tls.keepCopy(namespace);
    assert.deepEqual(cluster.writesSince(mark), [`apply Secret ${wildcardTlsSecretName}`]);
    assert.equal(copy()?.data?.['tls.key'], b64('renewed key'));
    const other = await tls.readiness('shop-pr-7.elsewhere.test', now, copy() as never);
    assert.equal(other?.ready, false);
    assert.match(other?.message ?? '', /does not cover shop-pr-7\.elsewhere\.test/);
  });

  it('per-preview and ingress-default: a copy left from a wildcard run is deleted; nothing is copied', async () => {
    for (const mode of ['per-preview', 'ingress-default'] as const) {
      const { cluster, issue, copy } = setup(mode);
      await issue('key');
      const informers = { copies: cluster.informer(secretKind, { labelSelector: wildcardCopyLabel }) };
      const client = cluster.client();
      await new WildcardTls({ client, informers, mode: 'wildcard', secret: source, logger: silentLogger }).keepCopy(namespace);
      assert.ok(copy(), 'a copy from the wildcard run');
      const tls = new WildcardTls({ client, informers, mode, ...(mode === 'per-preview' ? {} : { secret: source }), logger: silentLogger });
      const mark = cluster.writes.length;
      assert.equal(await tls.keepCopy(namespace), undefined);
      assert.deepEqual(cluster.writesSince(mark), [`delete Secret ${wildcardTlsSecretName}`]);
      await tls.keepCopy(namespace);
      assert.deepEqual(cluster.writesSince(mark), [`delete Secret ${wildcardTlsSecretName}`], 'once');
    }
  });

  it("ingress-default: ready when the ingress controller's default certificate covers the host", async () => {
    const { tls, issue } = setup('ingress-default');
    const absent = await tls.readiness(host, now, undefined);
    assert.equal(absent?.ready, false);
    assert.equal(absent?.message, "the ingress controller's default certificate: does not exist");
    await issue('key');
    assert.deepEqual(await tls.readiness(host, now, undefined), {
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'preview-operator/wildcard-tls',
      ready: true,
      message: `the ingress controller's default certificate, covers ${host}`,
    });
  });

  it('per-preview: no readiness of its own (the Certificate has one)', async () => {
    const { tls } = setup('per-preview');
    assert.equal(await tls.readiness(host, now, undefined), undefined);
  });
});
