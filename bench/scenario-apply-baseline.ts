// Scenario 3, the limit: the manifests one environment renders to, applied by the smallest loop
// that can do it — one process, one client, server-side apply in dependency order (the
// namespace, then each rank of src/kube/apply-order.ts with its objects in parallel, as the
// operator's Applier does), nothing else: no watch, no checkout, no status, no GitHub.
import { randomBytes } from 'node:crypto';
import { applyGroups } from '../src/kube/apply-order.js';
import { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import type { BenchEnvironment } from './bench-environment.js';
import { benchPreviewYaml, benchSpec, renderLikeTheController } from './bench-preview.js';
import type { StepResult } from './scenario-plan.js';
import { summarize } from './stats.js';

export const baselineUserAgent = 'preview-bench-baseline';

export function baselineClient(env: BenchEnvironment): KubeClient {
  return new KubeClient(env.cluster.kubeConfig, { fieldManager: baselineUserAgent, userAgent: baselineUserAgent });
}

/** Renders a fresh environment's manifests (outside the timing) and applies them; returns ms and the namespace. */
export async function baselineOnce(client: KubeClient, label: string): Promise<{ ms: number; namespace: string; objects: number }> {
  const name = `pr-1-base-${label}-${randomBytes(2).toString('hex')}`;
  const rendered = renderLikeTheController(name, benchSpec('bench', `base-${label}`, 1, randomBytes(20).toString('hex'), 'file:///dev/null'), benchPreviewYaml);
  const t = performance.now();
  await client.apply(rendered.namespace as KubeObject);
  for (const group of applyGroups(rendered.objects as KubeObject[])) await Promise.all(group.map((obj) => client.apply(obj)));
  return { ms: performance.now() - t, namespace: name, objects: rendered.objects.length + 1 };
}

export async function deleteNamespaces(client: KubeClient, names: readonly string[]): Promise<void> {
  await Promise.all(names.map((name) => client.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {})));
}

export async function applyBaseline(env: BenchEnvironment, options: { runs: number; log(line: string): void }): Promise<StepResult> {
  const client = baselineClient(env);
  const namespaces: string[] = [];
  try {
    // Discovery and the TLS connection are paid once by any long-running process: not measured.
    namespaces.push((await baselineOnce(client, 'warm')).namespace);
    const samples: number[] = [];
    let objects = 0;
    for (let i = 0; i < options.runs; i++) {
      const r = await baselineOnce(client, String(i));
      samples.push(r.ms);
      namespaces.push(r.namespace);
      objects = r.objects;
    }
    const s = summarize(samples);
    return {
      scenario: 3,
      title: 'The limit: minimal apply loop',
      figures: [
        { scenario: 3, name: 'baseline apply of one environment, median', value: s.p50, unit: 'ms' },
        { scenario: 3, name: 'baseline apply, p95', value: s.p95, unit: 'ms' },
      ],
      samples: { 'S3 baseline apply (minimal loop)': samples },
      notes: [`${objects} objects per environment (namespace, guards, Algorithm, Database, Service/Ingress …), ${options.runs} runs, fresh namespace each.`],
    };
  } finally {
    await deleteNamespaces(client, namespaces);
    client.close();
  }
}
