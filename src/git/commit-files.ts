// The files of one commit of a local repository, read straight from git's objects (no working
// tree, no checkout): what `synth` type-checks. Listing once, reading each file when asked —
// synchronously, because the TypeScript compiler's host is synchronous.
import { execFile, execFileSync } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';

/** A commit's files, by path relative to the repository's root. */
export interface CommitFiles {
  has(relativePath: string): boolean;
  /** Any path with a file under it (`a/b` for `a/b/c.ts`). */
  hasDirectory(relativePath: string): boolean;
  read(relativePath: string): string | undefined;
}

/** A source file larger than this is not one a preview's program reads. */
const maxFileBytes = 1024 * 1024;

function gitEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), GIT_CONFIG_NOSYSTEM: '1' };
}

/** The regular files of `sha` in the git repository at `repo`. */
export async function commitFiles(repo: string, sha: string): Promise<CommitFiles> {
  const { stdout } = await promisify(execFile)('git', ['-C', repo, 'ls-tree', '-r', '-z', '--full-tree', sha], {
    env: gitEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = new Set<string>();
  const directories = new Set<string>();
  for (const entry of stdout.split('\0')) {
    // `<mode> <type> <object>\t<path>`: regular files only (100644, 100755), no links or submodules.
    const match = /^(100644|100755) blob [0-9a-f]+\t(.+)$/s.exec(entry);
    if (!match) continue;
    const file = match[2]!;
    files.add(file);
    for (let i = file.indexOf('/'); i > 0; i = file.indexOf('/', i + 1)) directories.add(file.slice(0, i));
  }
  const read = (file: string): string | undefined => {
    if (!files.has(file)) return undefined;
    try {
      const blob = execFileSync('git', ['-C', repo, 'cat-file', 'blob', `${sha}:${file}`], { env: gitEnv(), maxBuffer: maxFileBytes });
      return blob.toString('utf8');
    } catch {
      // Larger than any source a preview reads (or unreadable): the compiler reports what imports it.
      return undefined;
    }
  };
  return { has: (file) => files.has(file), hasDirectory: (dir) => directories.has(dir), read };
}
