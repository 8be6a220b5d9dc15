// How the image runs Node, read from the Dockerfile: its ENV settings and the node flags of its
// ENTRYPOINT. The bench starts the operator with exactly these, so a runtime setting changed in
// the image is what the bench measures, without a second copy to keep in step.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface ImageRuntime {
  /** `ENV KEY=VALUE` lines of the final stage. */
  env: Record<string, string>;
  /** The flags between `node` and the script in the ENTRYPOINT. */
  nodeFlags: string[];
}

/** Parses the final stage of a Dockerfile (pure; the text is the argument). */
export function parseImageRuntime(dockerfile: string): ImageRuntime {
  const lines = dockerfile.split('\n');
  const finalStage = lines.map((l) => l.trim()).reduce((last, line, i) => (/^FROM\s/i.test(line) ? i : last), 0);
  const env: Record<string, string> = {};
  let nodeFlags: string[] | undefined;
  for (const line of lines.slice(finalStage).map((l) => l.trim())) {
    const envLine = /^ENV\s+(.+)$/i.exec(line);
    if (envLine) {
      for (const pair of envLine[1]!.split(/\s+/)) {
        const eq = pair.indexOf('=');
        if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, '$1');
      }
    }
    const entrypoint = /^ENTRYPOINT\s+(\[.*\])$/i.exec(line);
    if (entrypoint) {
      const argv = JSON.parse(entrypoint[1]!) as string[];
      // An init may start node (`/usr/bin/tini -- node …`): node's flags are the ones after `node`.
      const node = argv.indexOf('node');
      if (node < 0 || (node > 0 && argv[node - 1] !== '--')) throw new Error(`the ENTRYPOINT does not start node: ${line}`);
      nodeFlags = argv.slice(node + 1).filter((arg) => arg.startsWith('--'));
    }
  }
  if (!nodeFlags) throw new Error('the Dockerfile has no ENTRYPOINT ["node", ...] in its final stage');
  return { env, nodeFlags };
}

/** The repository's own Dockerfile. */
export function imageRuntime(repositoryRoot: string): ImageRuntime {
  return parseImageRuntime(readFileSync(path.join(repositoryRoot, 'Dockerfile'), 'utf8'));
}
