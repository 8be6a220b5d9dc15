// A binary built from a Go module of this repository, cached under .cache/ by a hash of what
// decides it: kube-local (test/cluster) and cert-manager-local (test/cert-manager) both take
// many minutes to build cold on two cores, so one build serves every later run.
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface GoBinary {
  /** The binary's file name, and the prefix of its progress lines. */
  name: string;
  /** The Go module's folder (go.mod, go.sum and the `main` package). */
  moduleDir: string;
  /** Where builds are kept, one folder per source hash. */
  cacheDir: string;
  /** `-ldflags` of the build (version stamps). */
  ldflags: string;
  /** Anything else that decides the binary, hashed with the sources (e.g. the version stamped). */
  stamp: string;
  /** The first progress line of a cold build: what is built and how long it takes. */
  announce: string;
}

export interface BuildOptions {
  /** Receives progress lines; a cold build takes many minutes. Default: stderr. */
  log?: (line: string) => void;
}

/** A hash of everything that decides the binary: go.mod, go.sum, the Go sources and the stamp. */
export function goSourceHash(moduleDir: string, stamp: string): string {
  const hash = createHash('sha256');
  const files = readdirSync(moduleDir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || (f.endsWith('.go') && !f.endsWith('_test.go')))
    .sort();
  for (const file of files) {
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(moduleDir, file)))
      .update('\0');
  }
  hash.update(stamp);
  return hash.digest('hex').slice(0, 16);
}

/**
 * Returns the path of the binary, building it only when the sources changed since the
 * cached build. Concurrent callers (other processes too) wait for one build.
 */
export async function ensureGoBinary(binary: GoBinary, options: BuildOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const hash = goSourceHash(binary.moduleDir, binary.stamp);
  const target = path.join(binary.cacheDir, hash, binary.name);
  if (existsSync(target)) return target;

  mkdirSync(binary.cacheDir, { recursive: true });
  const lock = path.join(binary.cacheDir, `${hash}.lock`);
  const owned = await acquireLock(
    lock,
    () => existsSync(target),
    (waited) => {
      const holder = lockHolder(lock);
      log(
        waited === 0
          ? `${binary.name}: another process${holder ? ` (pid ${holder})` : ''} is building it; waiting for that build (${lock})`
          : `${binary.name}: still waiting for the build of another process (${Math.round(waited / 1000)}s)`,
      );
    },
  );
  if (!owned) return target;
  try {
    if (existsSync(target)) return target;
    await build(binary, target, log);
    pruneOldBuilds(binary.cacheDir, hash);
    return target;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(process.pid));
    return true;
  } catch {
    return false;
  }
}

/** The pid of the process that holds the lock, if it wrote one. */
function lockHolder(lock: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(lock, 'pid'), 'utf8'));
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the build lock (true), or waits while another process holds it (false once `done`);
 * `waiting` hears of it at once and every 30 s, so a cold build elsewhere is never silent. A lock
 * whose process is gone (killed mid-build) is taken over.
 */
async function acquireLock(lock: string, done: () => boolean, waiting: (waitedMs: number) => void): Promise<boolean> {
  const started = Date.now();
  let told = -1;
  while (!tryLock(lock)) {
    if (done()) return false;
    const holder = lockHolder(lock);
    if (holder !== undefined && !alive(holder)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    const waited = Date.now() - started;
    const period = Math.floor(waited / 30_000);
    if (period !== told) {
      told = period;
      waiting(period * 30_000);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  return true;
}

function pruneOldBuilds(cacheDir: string, keep: string): void {
  for (const entry of readdirSync(cacheDir)) {
    if (entry !== keep && /^[0-9a-f]{16}$/.test(entry)) rmSync(path.join(cacheDir, entry), { recursive: true, force: true });
  }
}

async function build(binary: GoBinary, target: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  log(`${binary.name}: ${binary.announce}`);
  const args = ['build', '-v', '-trimpath', '-ldflags', binary.ldflags, '-o', partial, '.'];
  const child = spawn('go', args, {
    cwd: binary.moduleDir,
    env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly -buildvcs=false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let packages = 0;
  let lastPackage = '';
  const output: string[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) {
      if (!line.trim()) continue;
      // `go build -v` names each package as it is compiled; anything else is a diagnostic.
      if (/^[\w.-]+(\/[\w.~-]+)*$/.test(line.trim())) {
        packages++;
        lastPackage = line.trim();
      } else {
        output.push(line);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const ticker = setInterval(() => {
    const secs = Math.round((Date.now() - started) / 1000);
    log(`${binary.name}: still building (${secs}s, ${packages} packages compiled, last ${lastPackage || 'none yet'})`);
  }, 30_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`${binary.name}: cannot run go (is Go >= 1.26 installed and on PATH?): ${err.message}`)));
    child.on('exit', resolve);
  }).finally(() => clearInterval(ticker));
  if (code !== 0) {
    throw new Error(`${binary.name}: go build failed with exit code ${code}:\n${output.slice(-60).join('\n')}`);
  }
  renameSync(partial, target);
  log(`${binary.name}: built in ${Math.round((Date.now() - started) / 1000)}s (${packages} packages)`);
}
