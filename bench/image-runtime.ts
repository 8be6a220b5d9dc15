// How the image runs Node, read from the Dockerfile: its final stage's ENV and the node flags of
// its ENTRYPOINT. The bench starts the operator with exactly these, without a copy to keep in step.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface ImageRuntime {
  env: Record<string, string>;
  /** The flags between `node` and the script in the ENTRYPOINT. */
  nodeFlags: string[];
}

/** Parses the final stage of a Dockerfile (pure). */
export function parseImageRuntime(dockerfile: string): ImageRuntime {
  const lines = dockerfile.split('\n').map((l) => l.trim());
  const env: Record<string, string> = {};
  let nodeFlags: string[] | undefined;
  for (const line of lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)))) {
    for (const [, key, value] of (/^ENV\s+(.+)$/i.exec(line)?.[1] ?? '').matchAll(/(\w+)="?([^\s"]*)"?/g)) env[key!] = value!;
    const entrypoint = /^ENTRYPOINT\s+(\[.*\])$/i.exec(line)?.[1];
    if (!entrypoint) continue;
    const argv = JSON.parse(entrypoint) as string[];
    // An init may start node (`/usr/bin/tini -- node …`): node's flags are the ones after `node`.
    const node = argv.indexOf('node');
    if (node < 0 || (node > 0 && argv[node - 1] !== '--')) throw new Error(`the ENTRYPOINT does not start node: ${line}`);
    nodeFlags = argv.slice(node + 1).filter((arg) => arg.startsWith('--'));
  }
  if (!nodeFlags) throw new Error('the Dockerfile has no ENTRYPOINT ["node", ...] in its final stage');
  return { env, nodeFlags };
}

export const imageRuntime = (repositoryRoot: string) => parseImageRuntime(readFileSync(path.join(repositoryRoot, 'Dockerfile'), 'utf8'));
