// The example preview: examples/repository/.preview/ rendered for a made-up pull request,
// exactly as the operator renders a repository's configuration (validate preview.yaml, build
// the chart, run main.ts). Used by `npx cdk8s synth` (examples/synth.ts) and by the tests.
import { readFileSync } from 'node:fs';
import { App } from 'cdk8s';
import {
  PreviewEnvironmentChart,
  previewHostname,
  type Manifest,
  type PreviewEnvironmentChartProps,
  type PreviewIdentity,
} from 'preview-operator/constructs';
import { formatPreviewConfigErrors, validatePreviewConfig } from '../src/synth/preview-config-validation.js';
import { repositoryHash } from '../src/synth/render-preview.js';
import main from './repository/.preview/main.js';

export const exampleConfigPath = new URL('./repository/.preview/preview.yaml', import.meta.url);

export function exampleIdentity(namespace = 'pr-42-reco-5f1d2c'): PreviewIdentity {
  return {
    environment: namespace,
    repository: { owner: 'alien6', name: 'reco' },
    pullRequest: 42,
    sha: '5f1d2c0b9a8e7d6c5b4a39281706f5e4d3c2b1a0',
    namespace,
    host: previewHostname({
      hostPrefix: 'reco',
      repositoryName: 'reco',
      repositoryHash: repositoryHash({ owner: 'alien6', name: 'reco' }),
      pullRequest: 42,
      domain: 'preview.alien6.io',
    }),
  };
}

/** Builds the example chart in `app`; throws with every validation error if preview.yaml is invalid. */
export function exampleChart(
  app: App,
  identity: PreviewIdentity = exampleIdentity(),
  options: Omit<PreviewEnvironmentChartProps, 'config' | 'identity'> = {},
): PreviewEnvironmentChart {
  const result = validatePreviewConfig(readFileSync(exampleConfigPath, 'utf8'));
  if (!result.ok) throw new Error(`invalid example configuration:\n${formatPreviewConfigErrors(result.errors)}`);
  const chart = new PreviewEnvironmentChart(app, 'preview', { ...options, config: result.config, identity });
  main(chart, chart.context);
  return chart;
}

/** The example's manifests. */
export function renderExamplePreview(identity?: PreviewIdentity): Manifest[] {
  return exampleChart(new App(), identity).toJson();
}
