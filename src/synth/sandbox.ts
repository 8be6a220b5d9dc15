// Runs a repository's `.preview/main.ts` (trusted PRs only) in a separate Node process:
//   - an empty environment: no tokens, no kubeconfig, no NODE_OPTIONS;
//   - Node 20's permission model: reads limited to the compiled bundle, the checkout and the
//     construct packages; no writes, no child processes, no workers, no addons, no inspector;
//   - the network, signals and forbidden built-ins closed by the bundle's import policy and the
//     hardening module (the permission model of Node 20 does not cover them);
//   - a heap cap (--max-old-space-size), a resident-memory cap (polled), a wall-clock limit and a
//     cap on output, each enforced by killing the process;
//   - one JSON document on stdout as the only answer: the manifests, or why there are none.
// The manifests still go through the rendering policy afterwards: the sandbox makes running the
// code safe for the operator, it does not make its output acceptable.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Manifest } from '../../constructs/index.js';
import { bundleSandboxProgram } from './sandbox-bundle.js';
import { SandboxError } from './sandbox-error.js';
import type { SandboxChildError, SandboxResponse } from './sandbox-harness.js';
import { packageDirectories } from './sandbox-package-dirs.js';
import type { PreviewSandboxInput } from './sandbox-preview-chart.js';

export interface SandboxLimits {
  /** Wall-clock limit for one run, bundling excluded (default 20 s: a normal run takes ~1 s, 4-5 s on a saturated node). */
  timeoutMs: number;
  /** V8 old-space heap limit (default 256 MB). */
  maxHeapMb: number;
  /** Resident memory limit, checked every 50 ms on Linux (default 512 MB); catches large Buffers the heap limit does not see. */
  maxRssMb: number;
  /** Largest answer accepted on stdout (default 8 MiB). */
  maxOutputBytes: number;
  /** How much of stderr (the code's console output) is kept, from the end (default 64 KiB). */
  maxLogBytes: number;
}

export interface SandboxOptions extends Partial<SandboxLimits> {
  /** The Node binary (default: the operator's own). */
  nodePath?: string;
  /** Module exporting `createSandboxChart`, a SandboxChartFactory (default: sandbox-preview-chart, the PreviewEnvironmentChart). */
  chartFactory?: string;
  /** The construct library's entry, i.e. what `preview-operator/constructs` means (default: this package's export). */
  constructsEntry?: string;
  /** Parent of the per-run temp directories holding bundles (default: the OS temp dir). */
  tempDir?: string;
}

export interface SandboxRequest<Input = PreviewSandboxInput> {
  /** The checkout (a worktree from RepositoryCache.withCheckout); it must contain no symlinks. */
  checkoutDir: string;
  /** The program inside the checkout (default `.preview/main.ts`). */
  entry?: string;
  /**
   * JSON-serialisable input for the chart factory inside the sandbox; for the default factory,
   * the PreviewEnvironmentChart props ({ config, identity, ... }).
   */
  input: Input;
}

export interface SandboxResult {
  manifests: Manifest[];
  /** What the code printed (console.*), tail-truncated. */
  logs: string;
  /** Time spent compiling in the operator and running in the sandbox. */
  bundleMs: number;
  runMs: number;
}

const defaults: SandboxLimits = {
  timeoutMs: 20_000,
  maxHeapMb: 256,
  maxRssMb: 512,
  maxOutputBytes: 8 * 1024 * 1024,
  maxLogBytes: 64 * 1024,
};

const here = path.dirname(fileURLToPath(import.meta.url));
const sourceExt = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
const defaultChartFactory = path.join(here, `sandbox-preview-chart${sourceExt}`);
const defaultConstructsEntry = path.resolve(here, '../..', `constructs/index${sourceExt}`);

const permissionWords: Record<string, (resource: string) => string> = {
  FileSystemRead: (r) => `read ${r}; it may read only files of the repository`,
  FileSystemWrite: (r) => `write ${r}; it may not write files`,
  ChildProcess: () => 'start a process; it may not start processes',
  WorkerThreads: () => 'start a worker thread; it may not start threads',
  Inspector: () => 'use the inspector',
  Network: () => 'use the network; it may not',
  Signal: (r) => `send a signal to ${r}; it may not`,
  Module: (r) => `load ${r}, which is not available in the sandbox`,
};

export class Sandbox<Input = PreviewSandboxInput> {
  readonly limits: SandboxLimits;
  private readonly nodePath: string;
  private readonly chartFactory: string;
  private readonly constructsEntry: string;
  private readonly tempDir: string;

  constructor(options: SandboxOptions = {}) {
    this.limits = {
      timeoutMs: options.timeoutMs ?? defaults.timeoutMs,
      maxHeapMb: options.maxHeapMb ?? defaults.maxHeapMb,
      maxRssMb: options.maxRssMb ?? defaults.maxRssMb,
      maxOutputBytes: options.maxOutputBytes ?? defaults.maxOutputBytes,
      maxLogBytes: options.maxLogBytes ?? defaults.maxLogBytes,
    };
    this.nodePath = options.nodePath ?? process.execPath;
    this.chartFactory = options.chartFactory ?? defaultChartFactory;
    this.constructsEntry = options.constructsEntry ?? defaultConstructsEntry;
    this.tempDir = options.tempDir ?? tmpdir();
  }

  /** Compiles and runs the checkout's program; resolves with its manifests or rejects with a SandboxError. */
  async run(request: SandboxRequest<Input>): Promise<SandboxResult> {
    const entry = request.entry ?? '.preview/main.ts';
    const checkoutDir = await realpath(request.checkoutDir);
    const entryPath = path.resolve(checkoutDir, entry);
    if (path.relative(checkoutDir, entryPath).startsWith('..') || path.isAbsolute(entry)) {
      throw new SandboxError('permission', `${entry} is not a path inside the repository`);
    }
    if (!(await stat(entryPath).then((s) => s.isFile(), () => false))) {
      throw new SandboxError('compile', `${entry} does not exist in the repository`);
    }
    await assertNoSymlinks(checkoutDir);
    const workDir = await mkdtemp(path.join(this.tempDir, 'preview-sandbox-'));
    try {
      const bundleStarted = performance.now();
      const outfile = path.join(workDir, 'main.mjs');
      const bundle = await bundleSandboxProgram({
        checkoutDir, entry, chartFactory: this.chartFactory, constructsEntry: this.constructsEntry, outfile,
      });
      await writeFile(outfile, bundle.code, { mode: 0o400 });
      const readable = [outfile, checkoutDir, ...packageDirectories(bundle.externalFiles)];
      const bundleMs = performance.now() - bundleStarted;
      const runStarted = performance.now();
      const { manifests, logs } = await this.execute(outfile, readable, checkoutDir, entry, request.input);
      return { manifests, logs, bundleMs, runMs: performance.now() - runStarted };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  private execute(bundle: string, readable: string[], checkoutDir: string, entry: string, input: unknown): Promise<{ manifests: Manifest[]; logs: string }> {
    const limits = this.limits;
    const args = [
      '--experimental-permission',
      ...readable.map((p) => `--allow-fs-read=${p}`),
      `--max-old-space-size=${limits.maxHeapMb}`,
      '--disallow-code-generation-from-strings',
      '--enable-source-maps',
      '--disable-warning=ExperimentalWarning',
      bundle,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(this.nodePath, args, { cwd: checkoutDir, env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
      const stdout: Buffer[] = [];
      let stdoutBytes = 0;
      let stderr = Buffer.alloc(0);
      let stopped: SandboxError | undefined;
      const logs = () => stderr.toString('utf8');
      const stop = (reason: SandboxError['reason'], message: string) => {
        if (stopped) return;
        stopped = new SandboxError(reason, message);
        child.kill('SIGKILL');
      };

      const timer = setTimeout(
        () => stop('timeout', `${entry} did not finish within ${formatSeconds(limits.timeoutMs)} and was stopped`),
        limits.timeoutMs,
      );
      const memoryWatch = setInterval(() => {
        void residentMb(child.pid).then((mb) => {
          if (mb !== undefined && mb > limits.maxRssMb) stop('memory', `${entry} used more than ${limits.maxRssMb} MB of memory and was stopped`);
        });
      }, 50);

      child.stdout.on('data', (chunk: Buffer) => {
        stdoutBytes += chunk.length;
        if (stdoutBytes > limits.maxOutputBytes) {
          stop('bad-output', `${entry} produced more than ${limits.maxOutputBytes} bytes of output`);
          return;
        }
        stdout.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr = Buffer.concat([stderr, chunk]);
        if (stderr.length > limits.maxLogBytes) stderr = stderr.subarray(stderr.length - limits.maxLogBytes);
      });
      child.stdin.on('error', () => {}); // a child that dies early closes its stdin; the exit says why
      child.stdin.end(JSON.stringify(input));

      child.on('error', (err) => {
        clearTimeout(timer);
        clearInterval(memoryWatch);
        reject(new Error(`could not start the sandbox process: ${err.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        clearInterval(memoryWatch);
        if (stopped) {
          stopped = new SandboxError(stopped.reason, stopped.message, logs());
          reject(stopped);
          return;
        }
        if (signal === 'SIGABRT' || code === 134) {
          if (/heap out of memory|Reached heap limit/.test(logs())) {
            reject(new SandboxError('memory', `${entry} used more than its ${limits.maxHeapMb} MB heap and was stopped`, logs()));
            return;
          }
        }
        try {
          resolve({ manifests: parseResponse(Buffer.concat(stdout).toString('utf8'), entry, code, signal, checkoutDir), logs: logs() });
        } catch (err) {
          reject(err instanceof SandboxError ? new SandboxError(err.reason, err.message, logs()) : err);
        }
      });
    });
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

async function residentMb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined; // already gone
  }
}

/** Node's permission model follows symlinks, so a checkout with one could expose any file. */
async function assertNoSymlinks(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const link = entries.find((e) => e.isSymbolicLink());
  if (link) {
    const where = path.relative(dir, path.join(link.parentPath, link.name));
    throw new SandboxError('permission', `the checkout contains a symbolic link (${where}); the sandbox runs only checkouts without symlinks`);
  }
}

function describeChildError(error: SandboxChildError, entry: string, checkoutDir: string): SandboxError {
  const at = error.location ? ` (at ${error.location})` : '';
  if (error.kind === 'permission') {
    const resource = error.resource && error.resource.startsWith(`${checkoutDir}/`) ? error.resource.slice(checkoutDir.length + 1) : (error.resource ?? '');
    const words = permissionWords[error.permission ?? '']?.(resource) ?? `use ${error.permission} ${resource}`.trim();
    return new SandboxError('permission', `${entry} tried to ${words}${at}`);
  }
  if (error.kind === 'bad-output') return new SandboxError('bad-output', error.message);
  return new SandboxError('exception', `${entry} threw ${error.message}${at}`);
}

function isManifest(value: unknown): value is Manifest {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const object = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  return typeof object.apiVersion === 'string' && typeof object.kind === 'string'
    && typeof object.metadata === 'object' && object.metadata !== null && typeof object.metadata.name === 'string';
}

function parseResponse(text: string, entry: string, code: number | null, signal: NodeJS.Signals | null, checkoutDir: string): Manifest[] {
  const ended = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  if (text.trim() === '') throw new SandboxError('bad-output', `${entry} ${ended} before producing manifests`);
  let response: SandboxResponse;
  try {
    response = JSON.parse(text) as SandboxResponse;
  } catch {
    throw new SandboxError('bad-output', `${entry} wrote something other than the sandbox's answer to stdout (it ${ended})`);
  }
  if (response.ok === false) throw describeChildError(response.error, entry, checkoutDir);
  if (response.ok !== true || !Array.isArray(response.manifests)) throw new SandboxError('bad-output', `${entry} produced no list of manifests`);
  const bad = response.manifests.findIndex((m) => !isManifest(m));
  if (bad >= 0) throw new SandboxError('bad-output', `object ${bad} of the output is not a Kubernetes object (apiVersion, kind, metadata.name)`);
  return response.manifests as Manifest[];
}
