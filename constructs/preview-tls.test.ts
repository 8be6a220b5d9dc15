// The chart in each TLS mode: per preview, a Certificate for the host and the Ingress serving its
// Secret; with a wildcard certificate, no Certificate at all — the Ingress serves the operator's
// copy (`wildcard`) or lists the host with no Secret, for the ingress controller's default
// certificate (`ingress-default`); without TLS, neither.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { App } from 'cdk8s';
import {
  PreviewEnvironmentChart,
  previewHostname,
  wildcardTlsSecretName,
  type Manifest,
  type PreviewEnvironmentChartProps,
} from './index.js';

const domain = 'preview.example.com';
const host = previewHostname({ repositoryName: 'shop', repositoryHash: 'd21b2cdf12b7', pullRequest: 7, domain });
const identity = {
  environment: 'pr-7-shop',
  repository: { owner: 'acme', name: 'shop' },
  pullRequest: 7,
  sha: 'a'.repeat(40),
  namespace: 'pr-7-shop',
  host,
};
const config = { version: 1 as const, algorithms: [{ name: 'web', image: 'shop:1' }] };

function render(tls: PreviewEnvironmentChartProps['tls']): { objects: Manifest[]; url: string } {
  const chart = new PreviewEnvironmentChart(new App(), 'preview', { config, identity, tls });
  return { objects: chart.toJson(), url: chart.url };
}

const ingressTls = (objects: Manifest[]) => (objects.find((o) => o.kind === 'Ingress')!.spec as { tls?: unknown }).tls;
const certificates = (objects: Manifest[]) => objects.filter((o) => o.kind === 'Certificate').map((o) => o.metadata.name);
const issuer = { name: 'letsencrypt', kind: 'ClusterIssuer' as const };

describe('TLS modes of a preview', () => {
  it('a preview host is one label under the domain, which is what *.<domain> covers', () => {
    assert.equal(host, 'shop-pr-7-d21b2cdf12b7.preview.example.com');
    const long = previewHostname({
      hostPrefix: 'a.b.c '.repeat(20),
      repositoryName: 'shop',
      repositoryHash: 'd21b2cdf12b7',
      pullRequest: 7,
      domain,
    });
    assert.equal(long.slice(0, -domain.length - 1).includes('.'), false, long);
  });

  it('per-preview (the default): a Certificate for exactly the host, its Secret served', () => {
    for (const tls of [undefined, { issuer }, { issuer, mode: 'per-preview' as const }]) {
      const { objects, url } = render(tls);
      assert.deepEqual(certificates(objects), ['preview-tls']);
      assert.deepEqual(ingressTls(objects), [{ hosts: [host], secretName: 'preview-tls' }]);
      assert.equal(url, `https://${host}`);
    }
  });

  it("wildcard: no Certificate; the Ingress serves the operator's copy of the wildcard Secret", () => {
    const { objects, url } = render({ issuer, mode: 'wildcard' });
    assert.deepEqual(certificates(objects), []);
    assert.deepEqual(ingressTls(objects), [{ hosts: [host], secretName: wildcardTlsSecretName }]);
    assert.equal(
      objects.some((o) => o.kind === 'Secret'),
      false,
      "the copy is the operator's, not the rendering's",
    );
    assert.equal(url, `https://${host}`);
  });

  it('ingress-default: no Certificate; the host is listed for TLS with no Secret', () => {
    const { objects, url } = render({ mode: 'ingress-default' });
    assert.deepEqual(certificates(objects), []);
    assert.deepEqual(ingressTls(objects), [{ hosts: [host] }]);
    assert.equal(url, `https://${host}`);
  });

  it('no TLS: neither a Certificate nor a TLS section', () => {
    const { objects, url } = render(false);
    assert.deepEqual(certificates(objects), []);
    assert.equal(ingressTls(objects), undefined);
    assert.equal(url, `http://${host}`);
  });
});
