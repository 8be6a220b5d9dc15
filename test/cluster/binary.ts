import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the Go module of the control plane lives. */
export const clusterModuleDir = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(clusterModuleDir, '..', '..');
const cacheDir = process.env.KUBE_LOCAL_CACHE ?? path.join(projectRoot, '.cache', 'kube-local');

export const kubernetesVersion = 'v1.37.2';

/** A hash of everything that decides the binary: go.mod, go.sum, the Go sources and the version stamp. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(clusterModuleDir)
    .filter((f) => f === 'go.mod' || f === 'go.sum' || (f.endsWith('.go') && !f.endsWith('_test.go')))
    .sort();
  for (const file of files) {
    hash.update(file).update('\0').update(readFileSync(path.join(clusterModuleDir, file))).update('\0');
  }
  hash.update(kubernetesVersion);
  return hash.digest('hex').slice(0, 16);
}

function versionFlags(): string {
  const [major, minor] = kubernetesVersion.slice(1).split('.');
  const vars: string[] = [];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    vars.push(`-X ${pkg}.gitVersion=${kubernetesVersion}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`);
    vars.push(`-X ${pkg}.gitTreeState=clean`);
  }
  return ['-s -w', ...vars].join(' ');
}

export interface BuildOptions {
  /** Receives progress lines; a cold build takes many minutes. Default: stderr. */
  log?: (line: string) => void;
}

/**
 * Returns the path of the control-plane binary, building it only when the sources
 * changed since the cached build. Concurrent callers wait for one build.
 */
export async function ensureBinary(options: BuildOptions = {}): Promise<string> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const hash = sourceHash();
  const target = path.join(cacheDir, hash, 'kube-local');
  if (existsSync(target)) return target;

  mkdirSync(cacheDir, { recursive: true });
  const lock = path.join(cacheDir, `${hash}.lock`);
  while (!tryLock(lock)) {
    if (existsSync(target)) return target;
    await new Promise((r) => setTimeout(r, 1000));
  }
  try {
    if (existsSync(target)) return target;
    await build(target, log);
    pruneOldBuilds(hash);
    return target;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    return false;
  }
}

function pruneOldBuilds(keep: string): void {
  for (const entry of readdirSync(cacheDir)) {
    if (entry !== keep && /^[0-9a-f]{16}$/.test(entry)) rmSync(path.join(cacheDir, entry), { recursive: true, force: true });
  }
}

async function build(target: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  log(`kube-local: building the Kubernetes ${kubernetesVersion} control plane from Go modules (a cold build takes 15-30 minutes; later runs reuse it)`);
  const args = ['build', '-v', '-trimpath', '-ldflags', versionFlags(), '-o', partial, '.'];
  const child = spawn('go', args, {
    cwd: clusterModuleDir,
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
      if (/^[\w.\-]+(\/[\w.\-~]+)*$/.test(line.trim())) {
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
    log(`kube-local: still building (${secs}s, ${packages} packages compiled, last ${lastPackage || 'none yet'})`);
  }, 30_000);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', (err) => reject(new Error(`kube-local: cannot run go (is Go >= 1.26 installed and on PATH?): ${err.message}`)));
    child.on('exit', resolve);
  }).finally(() => clearInterval(ticker));
  if (code !== 0) {
    throw new Error(`kube-local: go build failed with exit code ${code}:\n${output.slice(-60).join('\n')}`);
  }
  renameSync(partial, target);
  log(`kube-local: built in ${Math.round((Date.now() - started) / 1000)}s (${packages} packages)`);
}
