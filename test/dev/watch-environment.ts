// Prints the demo's PreviewEnvironments as they converge: each one's phase, deployed commit (and
// the head commit it is moving to), namespace, URL and resources, a line set each time they change
// — a push shows its redeploy, a close its teardown — and why one failed when it does.
import { previewEnvironmentKind } from '../../src/intake/environment-store.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/kube-object.js';

interface Phase {
  phase?: string;
  url?: string;
  namespace?: string;
  deployedSha?: string;
  resources?: { kind: string; name: string; ready: boolean; message?: string }[];
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

interface WatchedSpec {
  repository: { owner: string; name: string };
  pullRequest: { number: number; headSha: string };
}

/** A PreviewEnvironment as the watch reads it (its spec always there: the CRD requires it). */
export type WatchedEnvironment = KubeObject<WatchedSpec, Phase> & { spec: WatchedSpec };

const short = (sha: string | undefined) => sha?.slice(0, 7);

/** The lines that show the environment (or its absence: "gone" only once it has been `seen`). */
export function describeEnvironment(name: string, status: Phase | undefined, seen: boolean, headSha?: string): string {
  if (!status) return `environment ${name}: ${seen ? 'gone' : 'not recorded yet'}`;
  const deployed = short(status.deployedSha);
  const moving = headSha && headSha !== status.deployedSha ? short(headSha) : undefined;
  const commit = `${deployed ? ` at ${deployed}` : ''}${moving ? `${deployed ? ',' : ''} deploying ${moving}` : ''}`;
  const where = `${status.namespace ? `, namespace ${status.namespace}` : ''}${status.url ? `, ${status.url}` : ''}`;
  const resources = (status.resources ?? []).map((r) => {
    const state = r.ready ? 'ready' : `not ready${r.message ? ` (${r.message})` : ''}`;
    return `  ${r.kind}/${r.name} ${state}`;
  });
  return [`environment ${name}: ${status.phase ?? 'Pending'}${commit}${where}`, ...resources].join('\n');
}

/** The conditions that explain a Failed phase. */
export function failureLines(status: Phase): string[] {
  return (status.conditions ?? [])
    .filter((c) => c.status !== 'True' || c.type !== 'Ready')
    .map((c) => `  ${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`);
}

export interface WatchOptions {
  /** Which environments are the demo's. */
  matches: (env: WatchedEnvironment) => boolean;
  /** Names to report even before they are recorded (the first pull request's). */
  expected?: readonly string[];
  say: (line: string) => void;
  stopped: Promise<void>;
  /** Runs on each arrival of an environment at Ready or Failed. */
  settled: (env: WatchedEnvironment) => void;
}

/** Prints each change of the matching environments until `stopped`, polling every half second. */
export async function watchEnvironments(client: KubeClient, options: WatchOptions): Promise<void> {
  const shown = new Map<string, string>();
  const phases = new Map<string, string>();
  const seen = new Set<string>();
  for (const name of options.expected ?? []) shown.set(name, '');
  let done = false;
  void options.stopped.then(() => (done = true));
  while (!done) {
    const listed = await client.list<WatchedEnvironment>(previewEnvironmentKind).catch(() => undefined);
    if (listed) {
      const present = new Map(listed.items.filter(options.matches).map((env) => [env.metadata.name!, env]));
      for (const name of new Set([...shown.keys(), ...present.keys()])) {
        const env = present.get(name);
        if (env) seen.add(name);
        const status = env ? (env.status ?? {}) : undefined;
        const text = describeEnvironment(name, status, seen.has(name), env?.spec.pullRequest.headSha);
        if (text !== shown.get(name)) options.say(text);
        shown.set(name, text);
        // Settled anew on each arrival at Ready or Failed, and on a redeploy that never left Ready.
        const settledAt = `${status?.phase}@${status?.deployedSha}`;
        if (env && settledAt !== phases.get(name) && (status?.phase === 'Ready' || status?.phase === 'Failed')) {
          if (status.phase === 'Failed') for (const line of failureLines(status)) options.say(line);
          options.settled(env);
        }
        phases.set(name, settledAt);
      }
    }
    await Promise.race([options.stopped, new Promise((resolve) => setTimeout(resolve, 500))]);
  }
}
