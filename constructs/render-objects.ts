import { App, Chart } from 'cdk8s';
import type { Manifest, OwnerReference } from './kube-object.js';

/**
 * Builds objects in a throwaway chart and returns them as plain JSON, so that the
 * renderers get cdk8s' typed Kubernetes props without their callers holding a construct tree.
 * Creating an App writes nothing; only `synth()` would.
 */
export function renderObjects(build: (chart: Chart) => void, ownerReferences: readonly OwnerReference[] = []): Manifest[] {
  // Explicit props: the environment (CDK8S_OUTDIR, ...) must not influence a pure renderer.
  const app = new App({ outdir: 'unused', recordConstructMetadata: false });
  const chart = new Chart(app, 'render', { disableResourceNameHashes: true });
  build(chart);
  const objects = chart.toJson() as Manifest[];
  if (ownerReferences.length === 0) return objects;
  return objects.map((object) => ({
    ...object,
    metadata: { ...object.metadata, ownerReferences: ownerReferences.map((ref) => ({ ...ref })) },
  }));
}
