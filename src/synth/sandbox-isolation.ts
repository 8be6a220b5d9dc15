// The kernel boundary around a repository's code: the sandboxed Node process runs under a uid
// and gid of its own (never the operator's, never another run's), with no_new_privs, no
// capabilities, no supplementary groups, and in a network namespace of its own that holds only
// a downed loopback. The kernel then refuses what JavaScript-level hiding cannot: signals and
// ptrace against the operator or a sibling run (so no inspector activation either), sockets to
// anything, and reads of files its uid may not read.
//
// util-linux's `unshare`, `mount` and `setpriv` and bash do the work (all in every Debian,
// node:*-slim included).
// They need root, or CAP_SYS_ADMIN (network namespace), CAP_SETUID and CAP_SETGID, CAP_CHOWN
// (to hand the run its private copy) and CAP_KILL (to stop it). Where those are missing,
// repository code does not run: there is no weaker fallback.
import { randomInt } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A run's own identity: uid and gid outside any range a distribution or a user namespace hands out. */
export interface SandboxIdentity {
  uid: number;
  gid: number;
}

/** Linux capability numbers (linux/capability.h) the isolation needs. */
const requiredCapabilities: Record<string, number> = { CAP_CHOWN: 0, CAP_KILL: 5, CAP_SETGID: 6, CAP_SETUID: 7, CAP_SYS_ADMIN: 21 };
const requiredTools = ['unshare', 'setpriv', 'mount', 'bash'];
/** Runs get uids from [base, base + span): far above system, user and subuid ranges, below 2^32 - 1. */
const identityBase = 3_000_000_000;
const identitySpan = 1 << 24;

export type IsolationSupport = { ok: true; tools: Record<string, string> } | { ok: false; reason: string };

/** Capabilities in the effective set, from /proc/self/status (a hex mask). */
export function effectiveCapabilities(status: string): bigint {
  const hex = /^CapEff:\s+([0-9a-f]+)$/m.exec(status)?.[1];
  return hex === undefined ? 0n : BigInt(`0x${hex}`);
}

/** The capabilities in `required` that `mask` lacks. */
export function missingCapabilities(mask: bigint): string[] {
  return Object.entries(requiredCapabilities)
    .filter(([, bit]) => (mask & (1n << BigInt(bit))) === 0n)
    .map(([name]) => name);
}

function findTool(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(':').filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

let cached: IsolationSupport | undefined;

/** Whether this process can isolate a child (checked once: capabilities do not change at run time). */
export function isolationSupport(): IsolationSupport {
  if (cached) return cached;
  cached = detectIsolationSupport();
  return cached;
}

function detectIsolationSupport(): IsolationSupport {
  if (process.platform !== 'linux') return { ok: false, reason: `the sandbox needs Linux (this is ${process.platform})` };
  const missing = missingCapabilities(effectiveCapabilities(readFileSync('/proc/self/status', 'utf8')));
  if (missing.length > 0) {
    return {
      ok: false,
      reason: `the operator lacks ${missing.join(', ')} to run repository code under another uid in its own network namespace`,
    };
  }
  const searchPath = `${process.env.PATH ?? ''}:/usr/bin:/bin:/usr/sbin:/sbin`;
  const tools: Record<string, string> = {};
  for (const tool of requiredTools) {
    const found = findTool(tool, searchPath);
    if (!found) return { ok: false, reason: `${tool} (util-linux) is not installed` };
    tools[tool] = found;
  }
  return { ok: true, tools };
}

/** A fresh identity for one run; two runs at once (in any process) practically never share one. */
export function newSandboxIdentity(): SandboxIdentity {
  const id = identityBase + randomInt(identitySpan);
  return { uid: id, gid: id };
}

/**
 * Runs as root inside the new mount namespace, before the uid changes. Empty tmpfs go over the
 * places where Unix sockets live (a network namespace does not cover sockets reached by path);
 * the directories the run needs (its work directory, Node, the construct packages) are bound
 * back at their own paths first, since any of them may lie under one of those places. Every
 * inherited descriptor above the four the sandbox protocol uses is closed (Node marks only its
 * own close-on-exec). Directories on the way to a kept one that the run's uid could not pass
 * (a checkout under /root, say) are covered by a tmpfs too, so the kept ones are reachable.
 * The run may hold at most 128 descriptors: the memory limit sees only resident memory, and
 * each socket pins kernel buffers (some 200 KiB each) that it never counts. (Connections left in
 * a listener's backlog pin theirs without a descriptor: only a cgroup per run would bound those.)
 * Arguments: the count of directories to keep and them, the count of closed ancestors and them,
 * the command.
 */
/** Descriptors one run may hold (Node itself takes about 20). */
export const maxRunDescriptors = 128;

const prepareMounts = `set -e
count=$1; shift
keep=()
for ((i = 0; i < count; i++)); do keep+=("$1"); shift; done
count=$1; shift
closed=()
for ((i = 0; i < count; i++)); do closed+=("$1"); shift; done
mount -t tmpfs -o mode=0700,size=64k tmpfs /mnt
for i in "\${!keep[@]}"; do mkdir "/mnt/$i"; mount --bind "\${keep[$i]}" "/mnt/$i"; done
for dir in /run /tmp /var/tmp /dev/shm "\${closed[@]}"; do
  if [ -d "$dir" ] && [ ! -L "$dir" ]; then mount -t tmpfs -o mode=1777,size=64k,nosuid,nodev,noexec tmpfs "$dir"; fi
done
for i in "\${!keep[@]}"; do mkdir -p "\${keep[$i]}"; mount --bind "/mnt/$i" "\${keep[$i]}"; umount "/mnt/$i"; done
umount /mnt
for fd in /proc/self/fd/*; do
  n=\${fd##*/}
  if [ "$n" -gt 3 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
done
ulimit -n ${maxRunDescriptors}
exec -c "$@"`;

/** The outermost ancestors of `directories` that others may not pass through (no o+x). */
export function closedAncestors(directories: readonly string[], modeOf: (dir: string) => number | undefined): string[] {
  const closed = new Set<string>();
  for (const dir of directories) {
    const parts = dir.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const ancestor = `/${parts.slice(0, i).join('/')}`;
      const mode = modeOf(ancestor);
      if (mode !== undefined && (mode & 0o001) === 0) {
        closed.add(ancestor);
        break;
      }
    }
  }
  return [...closed];
}

function modeOf(dir: string): number | undefined {
  try {
    return statSync(dir).mode;
  } catch {
    return undefined;
  }
}

/** The directories to keep visible: `paths` without those already inside another, shortest first. */
export function outermostDirectories(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort((a, b) => a.length - b.length);
  return sorted.filter((p, i) => !sorted.slice(0, i).some((outer) => p.startsWith(`${outer}/`)));
}

/**
 * The command that runs `program args` isolated: new network, IPC and mount namespaces (the
 * mounts above), then the run's uid/gid with no groups, no capabilities (inheritable and
 * bounding sets cleared) and no_new_privs. Every step execs, so the spawned pid is the Node
 * process itself. `keep`: the directories the run reads (made visible again after the mounts).
 */
export function isolatedCommand(
  tools: Record<string, string>,
  identity: SandboxIdentity,
  keep: readonly string[],
  program: string,
  args: readonly string[],
): { command: string; args: string[] } {
  const directories = outermostDirectories(keep);
  const closed = closedAncestors(directories, modeOf);
  return {
    command: tools.unshare!,
    args: [
      '--net',
      '--ipc',
      '--mount',
      '--propagation',
      'private',
      '--',
      tools.bash!,
      '--norc',
      '--noprofile',
      '-c',
      prepareMounts,
      'sandbox-mounts',
      String(directories.length),
      ...directories,
      String(closed.length),
      ...closed,
      tools.setpriv!,
      `--reuid=${identity.uid}`,
      `--regid=${identity.gid}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
      program,
      ...args,
    ],
  };
}
