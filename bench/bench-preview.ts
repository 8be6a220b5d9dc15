// The preview the end-to-end scenarios deploy, and the operator's rendering settings for it:
// one Algorithm and one Database, the shape most pull requests have. The built-in chart
// renders it (no `.preview/main.ts`), so scenario 2 is the common path; scenario 7 times the
// sandbox separately.
import type { PreviewConfig, PreviewEnvironmentSpec, Manifest } from '../constructs/index.js';
import { validatePreviewConfig } from '../src/synth/preview-config-validation.js';
import { previewYaml } from '../test/support/preview-yaml.js';
import { AllowedKinds, defaultAllowedKinds } from '../src/synth/guard-allowed-kinds.js';
import { checkRenderedObjects } from '../src/synth/guard-rendered-objects.js';
import { previewChartProps, previewIdentity, renderPreviewInProcess, splitRendering, type PreviewRenderSettings } from '../src/synth/render-preview.js';

export const benchDomain = 'preview.bench.example';

export const benchRenderSettings: PreviewRenderSettings = {
  domain: benchDomain,
  ingressClassName: 'nginx',
  tls: false,
  podSecurity: 'restricted',
};

export const benchPreviewYaml = previewYaml();

export function validConfig(yaml: string): PreviewConfig {
  const v = validatePreviewConfig(yaml);
  if (!v.ok) throw new Error(`invalid preview.yaml: ${JSON.stringify(v.errors)}`);
  return v.config;
}

export function benchSpec(owner: string, repo: string, number: number, sha: string, cloneUrl: string): PreviewEnvironmentSpec {
  return {
    repository: { owner, name: repo, cloneUrl },
    pullRequest: { number, headSha: sha, headRef: `feature-${number}`, baseRef: 'main', author: 'alice', authorAssociation: 'MEMBER', fork: false },
  } as PreviewEnvironmentSpec;
}

export interface RenderedManifests {
  namespace: Manifest;
  objects: Manifest[];
}

/**
 * The controller's rendering of a configuration, git reads aside: validate preview.yaml, build
 * the chart, split off the namespace and its guards, check the policy (the functions
 * src/controllers/preview-environment-rendering.ts calls, in its order).
 */
export function renderLikeTheController(name: string, spec: PreviewEnvironmentSpec, yaml: string, settings: PreviewRenderSettings = benchRenderSettings): RenderedManifests {
  const config = validConfig(yaml);
  const identity = previewIdentity(name, spec, config, spec.pullRequest.headSha, settings.domain);
  const props = previewChartProps(identity, spec, config, settings);
  const operator = renderPreviewInProcess(props);
  const split = splitRendering(operator, operator.manifests, identity.namespace);
  const checked = checkRenderedObjects(split.objects, {
    namespace: identity.namespace,
    host: identity.host,
    allowedKinds: new AllowedKinds(defaultAllowedKinds),
    podSecurity: settings.podSecurity,
    ingressClassName: settings.ingressClassName,
    certificateIssuer: settings.tls === false ? undefined : { name: settings.tls.issuer?.name ?? 'preview-issuer', kind: settings.tls.issuer?.kind ?? 'ClusterIssuer' },
  });
  if (checked.violations.length > 0) throw new Error(`policy violations: ${checked.violations.map((v) => v.message).join('; ')}`);
  return { namespace: split.namespace, objects: [...split.guards, ...checked.objects] };
}
