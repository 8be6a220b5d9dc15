// Prints the demo's PreviewEnvironment as it converges: its phase, namespace, URL and resources,
// a line set each time they change, and why it failed when it does.
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/kube-object.js';

interface Phase {
  phase?: string;
  url?: string;
  namespace?: string;
  resources?: { kind: string; name: string; ready: boolean; message?: string }[];
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/** The lines that show the environment (or its absence: "gone" only once it has been `seen`). */
export function describeEnvironment(name: string, status: Phase | undefined, seen: boolean): string {
  if (!status) return `environment ${name}: ${seen ? 'gone' : 'not recorded yet'}`;
  const where = `${status.namespace ? `, namespace ${status.namespace}` : ''}${status.url ? `, ${status.url}` : ''}`;
  const resources = (status.resources ?? []).map((r) => {
    const state = r.ready ? 'ready' : `not ready${r.message ? ` (${r.message})` : ''}`;
    return `  ${r.kind}/${r.name} ${state}`;
  });
  return [`environment ${name}: ${status.phase ?? 'Pending'}${where}`, ...resources].join('\n');
}

/** The conditions that explain a Failed phase. */
export function failureLines(status: Phase): string[] {
  return (status.conditions ?? []).filter((c) => c.status !== 'True' || c.type !== 'Ready')
    .map((c) => `  ${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`);
}

/** Prints each change of the environment until `stopped`; `settled` runs on each arrival at Ready or Failed. */
export async function watchEnvironment(
  client: KubeClient, name: string, say: (line: string) => void, stopped: Promise<void>, settled: () => void,
): Promise<void> {
  const path = await client.pathOf({ ...previewEnvironmentKind, name });
  let last = '';
  let lastPhase: string | undefined;
  // The webhook's write lands just after its answer: "gone" only once it has been seen.
  let seen = false;
  let done = false;
  void stopped.then(() => (done = true));
  while (!done) {
    const env = await client.request<KubeObject & { status?: Phase }>({ path }).catch(() => undefined);
    seen ||= env !== undefined;
    const status = env ? env.status ?? {} : undefined;
    const shown = describeEnvironment(name, status, seen);
    if (shown !== last) say((last = shown));
    if (status?.phase !== lastPhase && (status?.phase === 'Ready' || status?.phase === 'Failed')) {
      if (status.phase === 'Failed') for (const line of failureLines(status)) say(line);
      settled();
    }
    lastPhase = status?.phase;
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
}
