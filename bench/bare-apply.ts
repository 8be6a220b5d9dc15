// The limit (scenario 3): an environment's manifests applied by the smallest loop that can — one
// client, server-side apply in dependency order (the namespace, then each rank of apply-order.ts in
// parallel, as the operator's Applier does), nothing else. One at a time beside scenario 2's PRs,
// and as a burst of as many environments as each operator burst, at the operator's concurrency.
import { randomBytes } from 'node:crypto';
import { applyGroups } from '../src/kube/apply-order.js';
import { KubeClient } from '../src/kube/client.js';
import type { KubeObject } from '../src/kube/kube-object.js';
import type { BenchEnvironment } from './bench-environment.js';
import { previewEnvironmentWorkers } from './operator-process.js';
import { benchPreviewYaml, benchSpec, renderLikeTheController } from './bench-preview.js';
import { timed } from './stats.js';

export function bareClient(env: BenchEnvironment): KubeClient {
  return new KubeClient(env.cluster.kubeConfig, { fieldManager: 'preview-bench-bare', userAgent: 'preview-bench-bare' });
}

/** A fresh environment's manifests (rendered outside any timing). */
function render(label: string): { name: string; objects: KubeObject[] } {
  const name = `pr-1-bare-${label}-${randomBytes(2).toString('hex')}`;
  const spec = benchSpec('bench', `bare-${label}`, 1, randomBytes(20).toString('hex'), 'file:///dev/null');
  const rendered = renderLikeTheController(name, spec, benchPreviewYaml);
  return { name, objects: [rendered.namespace, ...rendered.objects] as KubeObject[] };
}

async function apply(client: KubeClient, objects: readonly KubeObject[]): Promise<void> {
  await client.apply(objects[0]!);
  for (const group of applyGroups(objects.slice(1) as KubeObject[])) await Promise.all(group.map((obj) => client.apply(obj)));
}

/** `count` environments, `concurrency` applied at a time (a burst: as many as the operator's workers): all applied after, ms. */
export async function bareBurst(client: KubeClient, count: number, concurrency: number): Promise<{ ms: number; namespaces: string[] }> {
  const environments = Array.from({ length: count }, (_, i) => render(`${count}-${i}`));
  const t = performance.now();
  await timed(environments, concurrency, (e) => apply(client, e.objects));
  return { ms: performance.now() - t, namespaces: environments.map((e) => e.name) };
}

/** A bare burst of each size, each deleted before the next, after one unmeasured apply (discovery, the connection). */
export async function bareBursts(env: BenchEnvironment, client: KubeClient, sizes: readonly number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  await deleteNamespaces(env, (await bareBurst(client, 1, 1)).namespaces);
  for (const size of sizes) {
    const b = await bareBurst(client, size, previewEnvironmentWorkers);
    out.set(size, b.ms);
    await deleteNamespaces(env, b.namespaces);
  }
  return out;
}

/** Deletes the namespaces and waits until they are gone (the namespace controller empties them first). */
export async function deleteNamespaces(env: BenchEnvironment, names: readonly string[], timeoutMs = 300_000): Promise<void> {
  const left = new Set(names);
  await Promise.all(names.map((name) => env.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {})));
  for (const deadline = Date.now() + timeoutMs; left.size > 0 && Date.now() < deadline;) {
    const { items } = await env.admin.list<KubeObject>({ apiVersion: 'v1', kind: 'Namespace' });
    const present = new Set(items.map((i) => i.metadata.name));
    for (const name of left) if (!present.has(name)) left.delete(name);
    if (left.size > 0) await new Promise((r) => setTimeout(r, 500));
  }
}
