// The kernel boundary around a repository's code: the sandboxed Node process runs under a uid
// and gid of its own (never the operator's, never another run's), with no_new_privs, no
// capabilities, no supplementary groups, and in a network namespace of its own that holds only
// a downed loopback. The kernel then refuses what JavaScript-level hiding cannot: signals and
// ptrace against the operator or a sibling run (so no inspector activation either), sockets to
// anything, and reads of files its uid may not read.
//
// util-linux's `unshare` and `setpriv` do the work (in every Debian, node:*-slim included).
// They need root, or CAP_SYS_ADMIN (network namespace), CAP_SETUID and CAP_SETGID, CAP_CHOWN
// (to hand the run its private copy) and CAP_KILL (to stop it). Where those are missing,
// repository code does not run: there is no weaker fallback.
import { randomInt } from 'node:crypto';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';

/** A run's own identity: uid and gid outside any range a distribution or a user namespace hands out. */
export interface SandboxIdentity {
  uid: number;
  gid: number;
}

/** Linux capability numbers (linux/capability.h) the isolation needs. */
const requiredCapabilities: Record<string, number> = { CAP_CHOWN: 0, CAP_KILL: 5, CAP_SETGID: 6, CAP_SETUID: 7, CAP_SYS_ADMIN: 21 };
const requiredTools = ['unshare', 'setpriv'];
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
  return Object.entries(requiredCapabilities).filter(([, bit]) => (mask & (1n << BigInt(bit))) === 0n).map(([name]) => name);
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
    return { ok: false, reason: `the operator lacks ${missing.join(', ')} to run repository code under another uid in its own network namespace` };
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
 * The command that runs `program args` isolated: a new network and IPC namespace, then the
 * run's uid/gid with no groups, no capabilities (inheritable and bounding sets cleared) and
 * no_new_privs. Both tools exec, so the spawned pid is the Node process itself.
 */
export function isolatedCommand(
  tools: Record<string, string>, identity: SandboxIdentity, program: string, args: readonly string[],
): { command: string; args: string[] } {
  return {
    command: tools.unshare!,
    args: [
      '--net', '--ipc', '--',
      tools.setpriv!, `--reuid=${identity.uid}`, `--regid=${identity.gid}`, '--clear-groups',
      '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--',
      program, ...args,
    ],
  };
}
