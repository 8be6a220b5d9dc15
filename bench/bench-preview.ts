// The preview the end-to-end scenarios deploy: one Algorithm (the `.preview/preview.yaml` of issue
// 24's side-by-side comparison), rendered by the built-in chart (no `.preview/main.ts`: scenario 7
// times the sandbox apart), and the operator's rendering settings for it.
import type { PreviewConfig, PreviewEnvironmentSpec, Manifest } from '../constructs/index.js';
import { validatePreviewConfig } from '../src/synth/preview-config-validation.js';
import { previewYaml } from '../test/support/preview-yaml.js';
import { AllowedKinds, defaultAllowedKinds } from '../src/synth/guard-allowed-kinds.js';
import { checkRenderedObjects } from '../src/synth/guard-rendered-objects.js';
import * as render from '../src/synth/render-preview.js';

export const benchDomain = 'preview.bench.example';
export const benchRenderSettings: render.PreviewRenderSettings = {
  domain: benchDomain,
  ingressClassName: 'nginx',
  tls: false,
  podSecurity: 'restricted',
};
export const benchPreviewYaml = previewYaml({ database: false });

export interface Rendered {
  namespace: Manifest;
  objects: Manifest[];
}

export function validConfig(yaml: string): PreviewConfig {
  const v = validatePreviewConfig(yaml);
  if (!v.ok) throw new Error(`invalid preview.yaml: ${JSON.stringify(v.errors)}`);
  return v.config;
}

export function benchSpec(owner: string, repo: string, number: number, sha: string, cloneUrl: string): PreviewEnvironmentSpec {
  return {
    repository: { owner, name: repo, cloneUrl },
    pullRequest: { number, headSha: sha, headRef: `f-${number}`, baseRef: 'main', author: 'alice', authorAssociation: 'MEMBER' },
  } as PreviewEnvironmentSpec;
}

/**
 * The controller's rendering of a configuration, git reads aside: validate preview.yaml, build the
 * chart, split off the namespace and its guards, check the policy (the functions
 * src/controllers/preview-environment-rendering.ts calls, in its order).
 */
export function renderLikeTheController(name: string, spec: PreviewEnvironmentSpec, yaml = benchPreviewYaml): Rendered {
  const settings = benchRenderSettings;
  const config = validConfig(yaml);
  const identity = render.previewIdentity(name, spec, config, spec.pullRequest.headSha, settings.domain);
  const operator = render.renderPreviewInProcess(render.previewChartProps(identity, spec, config, settings));
  const split = render.splitRendering(operator, operator.manifests, identity.namespace);
  const [{ namespace, host }, { podSecurity, ingressClassName }] = [identity, settings];
  const allowedKinds = new AllowedKinds(defaultAllowedKinds);
  const checked = checkRenderedObjects(split.objects, { namespace, host, allowedKinds, podSecurity, ingressClassName });
  if (checked.violations.length > 0) throw new Error(`policy violations: ${checked.violations.map((v) => v.message).join('; ')}`);
  return { namespace: split.namespace, objects: [...split.guards, ...checked.objects] };
}
