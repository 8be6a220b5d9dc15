// The last rendering of each Algorithm's workloads. Rendering through cdk8s costs 1–2 ms, and an
// Algorithm is reconciled several times per rollout with the same inputs (each status change of
// its Deployment wakes it): the rendering is kept per Algorithm, keyed by everything it reads, and
// handed out as the same objects, so the Applier's prepared copies and hashes are reused too.
import { renderAlgorithmWorkloads, type AlgorithmInput, type AlgorithmWorkloadOptions, type KubeObject } from '../../constructs/index.js';

export class AlgorithmWorkloadMemo {
  private readonly last = new Map<string, { key: string; objects: readonly KubeObject[] }>();

  /** `renderAlgorithmWorkloads`, or its last answer for the same inputs: a new array, shared objects (never change them). */
  render(id: string, algorithm: AlgorithmInput, options: AlgorithmWorkloadOptions): KubeObject[] {
    const { name, namespace, uid, annotations } = algorithm.metadata;
    const key = JSON.stringify([name, namespace, uid, annotations, algorithm.spec, options]);
    const hit = this.last.get(id);
    if (hit?.key === key) return [...hit.objects];
    const objects = renderAlgorithmWorkloads(algorithm, options);
    this.last.set(id, { key, objects });
    return [...objects];
  }

  forget(id: string): void {
    this.last.delete(id);
  }
}
