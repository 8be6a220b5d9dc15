import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Manifest, PreviewConfig, PreviewEnvironmentSpec } from '../../constructs/index.js';
import {
  previewChartProps,
  previewIdentity,
  repositoryHash,
  renderPreviewInProcess,
  splitRendering,
  type PreviewRenderSettings,
} from './render-preview.js';

const spec: PreviewEnvironmentSpec = {
  repository: { owner: 'octo-org', name: 'Reco.Service', cloneUrl: 'https://github.com/octo-org/Reco.Service.git' },
  pullRequest: { number: 42, headSha: 'a'.repeat(40), headRef: 'feature', baseRef: 'main' },
  overrides: { images: { api: 'team/api:override' } },
};
const config: PreviewConfig = { algorithms: [{ name: 'api', image: 'team/api:1' }] };
const settings: PreviewRenderSettings = {
  domain: 'preview.example.com',
  ingressClassName: 'nginx',
  tls: { issuer: { name: 'staging', kind: 'ClusterIssuer' } },
  podSecurity: 'restricted',
};

describe('rendering a preview in the operator', () => {
  it("never gives one repository's pull request another's host: same name under another owner, or its hostPrefix copied", () => {
    const host = (owner: string, name: string, hostPrefix?: string) =>
      previewIdentity(
        'n',
        { ...spec, repository: { ...spec.repository, owner, name } },
        hostPrefix ? { ...config, hostPrefix } : config,
        'b'.repeat(40),
        'd',
      ).host;
    const victim = host('acme', 'shop');
    assert.notEqual(host('other', 'shop'), victim);
    assert.notEqual(host('acme', 'tools', 'shop'), victim);
    assert.equal(host('ACME', 'Shop'), victim, "GitHub's names are case-insensitive");
    assert.equal(repositoryHash({ owner: 'acme', name: 'shop' }), 'd21b2cdf12b7');
  });

  it('names the host from the repository (or hostPrefix) and renders the overrides', () => {
    const identity = previewIdentity('pr-42-reco-service-1234abcd', spec, config, spec.pullRequest.headSha, settings.domain);
    assert.equal(identity.host, 'reco-service-pr-42-a4749cbc2a92.preview.example.com');
    assert.equal(identity.namespace, 'pr-42-reco-service-1234abcd');
    assert.equal(
      previewIdentity('n', { ...spec, overrides: { hostPrefix: 'x' } }, { hostPrefix: 'y' }, 'b'.repeat(40), 'd').host,
      'x-pr-42-a4749cbc2a92.d',
    );
    const rendered = renderPreviewInProcess(previewChartProps(identity, spec, config, settings));
    assert.equal(rendered.url, 'https://reco-service-pr-42-a4749cbc2a92.preview.example.com');
    const algorithm = rendered.manifests.find((m) => m.kind === 'Algorithm')!;
    assert.equal((algorithm.spec as { image: string }).image, 'team/api:override');
    const certificate = rendered.manifests.find((m) => m.kind === 'Certificate')!;
    assert.equal((certificate.spec as { issuerRef: { name: string } }).issuerRef.name, 'staging');
  });

  it('without cert-manager: no Certificate, an Ingress without TLS and an http URL', () => {
    const identity = previewIdentity('pr-42-x', spec, config, spec.pullRequest.headSha, settings.domain);
    const rendered = renderPreviewInProcess(previewChartProps(identity, spec, config, { ...settings, tls: false }));
    assert.equal(
      rendered.manifests.some((m) => m.kind === 'Certificate'),
      false,
    );
    assert.equal((rendered.manifests.find((m) => m.kind === 'Ingress')!.spec as { tls?: unknown }).tls, undefined);
    assert.equal(rendered.url, 'http://reco-service-pr-42-a4749cbc2a92.preview.example.com');
  });

  it("the namespace and its guards always come from the operator's rendering; a repository's versions are dropped", () => {
    const identity = previewIdentity('pr-42-x', spec, config, spec.pullRequest.headSha, settings.domain);
    const operator = renderPreviewInProcess(previewChartProps(identity, spec, config, settings));
    const tampered: Manifest[] = operator.manifests
      .map((m) => (m.kind === 'ResourceQuota' ? { ...m, spec: { hard: { 'limits.cpu': '1000' } } } : m))
      .map((m) => (m.kind === 'ServiceAccount' ? { ...m, automountServiceAccountToken: true } : m));
    tampered.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'preview-quota', namespace: 'pr-42-x' } });
    const split = splitRendering(operator, tampered, 'pr-42-x');
    assert.equal(split.namespace.kind, 'Namespace');
    assert.deepEqual(split.guards.map((m) => m.kind).sort(), ['LimitRange', 'NetworkPolicy', 'ResourceQuota', 'ServiceAccount']);
    assert.equal((split.guards.find((m) => m.kind === 'ResourceQuota')!.spec as { hard: Record<string, string> }).hard['limits.cpu'], '8');
    assert.equal(
      split.guards.find((m) => m.kind === 'ServiceAccount')!.automountServiceAccountToken,
      false,
      "the default ServiceAccount is the operator's",
    );
    assert.deepEqual(split.objects.map((m) => `${m.kind}/${m.metadata.name}`).sort(), [
      'Algorithm/api',
      'Certificate/preview-tls',
      'ConfigMap/preview-quota',
      'Ingress/preview',
    ]);
  });
});
