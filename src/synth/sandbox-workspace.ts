// A run's private copy of the checkout. The sandboxed process may read its own copy and nothing
// else of the operator's: the copy belongs to the operator's uid and the run's gid (directories
// 0750, files 0640), so neither a sibling run (another gid) nor anyone else can read it, and the
// run itself cannot change it. The checkout cache stays the operator's; `.git` is not copied
// (its config and packed refs are not the code's business), nor is any symlink (refused: Node's
// permission model follows them).
import { chmod, chown, copyFile, lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { SandboxError } from './sandbox-error.js';
import type { SandboxIdentity } from './sandbox-isolation.js';

export interface WorkspaceLimits {
  /** Most files copied (default 20,000). */
  maxFiles: number;
  /** Most directories copied (default 5,000): a git tree can repeat one subtree into millions. */
  maxDirectories: number;
  /** Most bytes copied (default 200 MiB). */
  maxBytes: number;
  /** Time the copy may take (default 20 s). */
  timeoutMs: number;
}

export const defaultWorkspaceLimits: WorkspaceLimits = {
  maxFiles: 20_000,
  maxDirectories: 5_000,
  maxBytes: 200 * 1024 * 1024,
  timeoutMs: 20_000,
};

interface CopyState {
  files: number;
  directories: number;
  bytes: number;
  readonly deadline: number;
  readonly limits: WorkspaceLimits;
  readonly source: string;
  readonly owner: SandboxIdentity;
}

/** Gives `file` to the operator's uid and the run's gid with `mode`. */
export async function handOver(file: string, mode: number, owner: SandboxIdentity): Promise<void> {
  await chown(file, process.getuid?.() ?? 0, owner.gid);
  await chmod(file, mode);
}

function tooLarge(state: CopyState): SandboxError {
  const { maxFiles, maxDirectories, maxBytes, timeoutMs } = state.limits;
  return new SandboxError(
    'permission',
    `the checkout is larger than the sandbox takes (${maxFiles} files, ${maxDirectories} directories, ${maxBytes} bytes, copied within ${timeoutMs / 1000} s)`,
  );
}

async function copyDirectory(from: string, to: string, state: CopyState): Promise<void> {
  state.directories += 1;
  if (state.directories > state.limits.maxDirectories || performance.now() > state.deadline) throw tooLarge(state);
  await mkdir(to, { mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    if (from === state.source && entry.name === '.git') continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    const where = path.relative(state.source, source);
    if (entry.isSymbolicLink()) {
      throw new SandboxError(
        'permission',
        `the checkout contains a symbolic link (${where}); the sandbox runs only checkouts without symlinks`,
      );
    }
    if (entry.isDirectory()) {
      await copyDirectory(source, target, state);
    } else if (entry.isFile()) {
      state.files += 1;
      state.bytes += (await lstat(source)).size;
      if (state.files > state.limits.maxFiles || state.bytes > state.limits.maxBytes) throw tooLarge(state);
      await copyFile(source, target);
      await handOver(target, 0o640, state.owner);
    }
    // sockets, FIFOs and devices are not code: left out
  }
  await handOver(to, 0o750, state.owner);
}

/**
 * Copies `checkoutDir` to `<workDir>/checkout` for the run `owner` and returns the copy's
 * path. `workDir` itself is handed over too.
 */
export async function preparePrivateCheckout(
  checkoutDir: string,
  workDir: string,
  owner: SandboxIdentity,
  limits: WorkspaceLimits = defaultWorkspaceLimits,
): Promise<string> {
  const copy = path.join(workDir, 'checkout');
  const deadline = performance.now() + limits.timeoutMs;
  await copyDirectory(checkoutDir, copy, { files: 0, directories: 0, bytes: 0, deadline, limits, source: checkoutDir, owner });
  await handOver(workDir, 0o750, owner);
  return copy;
}
