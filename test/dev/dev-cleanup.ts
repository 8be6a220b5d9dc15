// What `npm run dev` removes on Ctrl-C from a cluster it did not start (KUBECONFIG): the demo
// repository's PreviewEnvironments, deleted while the operator still runs so that its finalizer
// tears each namespace down (and tells the emulator), the way an uninstall should go. Whatever is
// still there at the deadline (an operator run without the preview-environment controller, a
// namespace slow to go) is removed the operator-less way: finalizer dropped, namespace deleted.
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import { NotFoundError, type KubeClient, type KubeObject } from '../../src/kube/index.js';

type Environment = KubeObject<{ repository: { owner: string; name: string } }>;

export interface DevCleanupOptions {
  /** Which environments are the demo's. */
  matches: (repository: { owner: string; name: string }) => boolean;
  say: (line: string) => void;
  /** How long the operator's finalizer may take (default 60 s). */
  timeoutMs?: number;
}

/** Deletes the demo's PreviewEnvironments and waits until they and their namespaces are gone. */
export async function removeDemoEnvironments(client: KubeClient, options: DevCleanupOptions): Promise<void> {
  const demo = async () =>
    (await client.list<Environment>(previewEnvironmentKind)).items.filter((e) => e.spec && options.matches(e.spec.repository));
  const names = (await demo()).map((e) => e.metadata.name!);
  if (names.length === 0) return;
  options.say(`removing ${names.length} PreviewEnvironment(s) and their namespaces: ${names.join(', ')}`);
  for (const name of names) await ignoreMissing(client.delete({ ...previewEnvironmentKind, name }));
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline && ((await demo()).length > 0 || (await namespacesLeft(client, names)).length > 0)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const left = await demo();
  for (const env of left) {
    await ignoreMissing(client.patch({ ...previewEnvironmentKind, name: env.metadata.name! }, 'merge', { metadata: { finalizers: null } }));
  }
  for (const name of await namespacesLeft(client, names)) await ignoreMissing(client.delete({ apiVersion: 'v1', kind: 'Namespace', name }));
  if (left.length > 0) options.say(`${left.length} PreviewEnvironment(s) did not finish in time: finalizers dropped, namespaces deleted`);
}

/** The environments' namespaces (each named like its environment) that still exist. */
async function namespacesLeft(client: KubeClient, names: readonly string[]): Promise<string[]> {
  const { items } = await client.list({ apiVersion: 'v1', kind: 'Namespace' }, { labelSelector: 'preview.alien6.io/environment' });
  return items.map((n) => n.metadata.name!).filter((name) => names.includes(name));
}

async function ignoreMissing(request: Promise<unknown>): Promise<void> {
  try {
    await request;
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
}
