// Runs a repository's `.preview/main.ts` (trusted PRs only) in a separate Node process behind
// the kernel's boundary (sandbox-isolation.ts): its own uid and gid, no capabilities,
// no_new_privs, a network namespace with no route anywhere, a private read-only copy of the
// checkout (sandbox-workspace.ts), an empty environment. Node's permission model is a second
// layer (reads limited to the bundle, the copy and the construct packages; no writes, processes,
// workers, addons or inspector), and the hardening module only words refusals clearly.
// Limits: heap (--max-old-space-size), resident memory, wall clock and answer size, each enforced
// by killing the process. The answer arrives on fd 3 behind a per-run nonce. Where the isolation
// cannot be had, nothing runs: the run fails with reason `isolation`.
// The manifests still go through the rendering guard afterwards: the sandbox makes running the
// code safe for the operator, it does not make its output acceptable.
import { randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Manifest } from '../../constructs/index.js';
import { defaultOutputLimits } from './rendered-output-limits.js';
import { readAnswer } from './sandbox-answer.js';
import { bundleSandboxProgram } from './sandbox-bundle.js';
import { SandboxError } from './sandbox-error.js';
import type { SandboxRequestDocument } from './sandbox-hardening.js';
import { isolationSupport, newSandboxIdentity, type SandboxIdentity } from './sandbox-isolation.js';
import { packageDirectories } from './sandbox-package-dirs.js';
import type { PreviewSandboxInput } from './sandbox-preview-chart.js';
import { runSandboxProcess } from './sandbox-process.js';
import { defaultWorkspaceLimits, handOver, preparePrivateCheckout } from './sandbox-workspace.js';

export interface SandboxLimits {
  /** Wall-clock limit for one run, bundling excluded (default 20 s: a normal run takes ~1 s, 4-5 s on a saturated node). */
  timeoutMs: number;
  /** V8 old-space heap limit (default 256 MB). */
  maxHeapMb: number;
  /** Resident memory limit, checked every 50 ms on Linux (default 512 MB); catches large Buffers the heap limit does not see. */
  maxRssMb: number;
  /** Largest answer accepted on the result channel (default 8 MiB). */
  maxOutputBytes: number;
  /** How much of stdout and stderr (the code's console output) is kept, from the end (default 64 KiB). */
  maxLogBytes: number;
}

export interface SandboxOptions extends Partial<SandboxLimits> {
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

/** Runs repository code: the local Sandbox, or the renderer it serves (sandbox-remote.ts). */
export interface SandboxRunner<Input = PreviewSandboxInput> {
  run(request: SandboxRequest<Input>): Promise<SandboxResult>;
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

/** A program ready to run: its bundle, what it may read, and the run's identity. */
interface BundledRun {
  tools: Record<string, string>;
  identity: SandboxIdentity;
  workDir: string;
  outfile: { path: string; readable: string[] };
  copy: string;
  entry: string;
}

/** The `node_modules` directory a package lies in (the path itself when it is in none). */
function nodeModulesRoot(dir: string): string {
  const at = dir.lastIndexOf('/node_modules/');
  return at < 0 ? dir : dir.slice(0, at + '/node_modules'.length);
}

/** The permission model's switch: stable on Node 22 and later (this project runs on 24). */
const permissionFlag = Number(process.versions.node.split('.')[0]) >= 22 ? '--permission' : '--experimental-permission';

export class Sandbox<Input = PreviewSandboxInput> implements SandboxRunner<Input> {
  readonly limits: SandboxLimits;
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
    this.chartFactory = options.chartFactory ?? defaultChartFactory;
    this.constructsEntry = options.constructsEntry ?? defaultConstructsEntry;
    this.tempDir = options.tempDir ?? tmpdir();
  }

  /** Compiles and runs the checkout's program; resolves with its manifests or rejects with a SandboxError. */
  async run(request: SandboxRequest<Input>): Promise<SandboxResult> {
    const entry = request.entry ?? '.preview/main.ts';
    const support = isolationSupport();
    if (!support.ok)
      throw new SandboxError('isolation', `${entry} was not run: repository code runs only isolated by the kernel, and ${support.reason}`);
    const checkoutDir = await realpath(request.checkoutDir);
    const entryPath = path.resolve(checkoutDir, entry);
    if (path.relative(checkoutDir, entryPath).startsWith('..') || path.isAbsolute(entry)) {
      throw new SandboxError('permission', `${entry} is not a path inside the repository`);
    }
    if (
      !(await stat(entryPath).then(
        (s) => s.isFile(),
        () => false,
      ))
    ) {
      throw new SandboxError('compile', `${entry} does not exist in the repository`);
    }
    const identity = newSandboxIdentity();
    const workDir = await mkdtemp(path.join(this.tempDir, 'preview-sandbox-'));
    try {
      const bundleStarted = performance.now();
      const copy = await preparePrivateCheckout(checkoutDir, workDir, identity, {
        ...defaultWorkspaceLimits,
        timeoutMs: this.limits.timeoutMs,
      });
      const outfile = await this.bundle(copy, entry, workDir, identity);
      const bundleMs = performance.now() - bundleStarted;
      const runStarted = performance.now();
      const answer = await this.execute({ tools: support.tools, identity, workDir, outfile, copy, entry }, request.input);
      return { ...answer, bundleMs, runMs: performance.now() - runStarted };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }

  /** Bundles the copy's program into `<workDir>/main.mjs`, readable by the run only. */
  private async bundle(copy: string, entry: string, workDir: string, identity: SandboxIdentity): Promise<BundledRun['outfile']> {
    const outfile = path.join(workDir, 'main.mjs');
    const bundle = await bundleSandboxProgram({
      checkoutDir: copy,
      entry,
      chartFactory: this.chartFactory,
      constructsEntry: this.constructsEntry,
      outfile,
    });
    await writeFile(outfile, bundle.code, { mode: 0o400 });
    await handOver(outfile, 0o440, identity);
    return { path: outfile, readable: [outfile, copy, ...packageDirectories(bundle.externalFiles)] };
  }

  private async execute(run: BundledRun, input: unknown): Promise<{ manifests: Manifest[]; logs: string }> {
    const { entry, copy, outfile } = run;
    const nonce = randomBytes(24).toString('base64url');
    const outcome = await runSandboxProcess({
      tools: run.tools,
      identity: run.identity,
      entry,
      cwd: copy,
      limits: this.limits,
      keep: [run.workDir, path.dirname(process.execPath), ...outfile.readable.map(nodeModulesRoot)],
      nodePath: process.execPath,
      nodeArgs: [
        permissionFlag,
        ...outfile.readable.map((p) => `--allow-fs-read=${p}`),
        `--max-old-space-size=${this.limits.maxHeapMb}`,
        '--disallow-code-generation-from-strings',
        '--enable-source-maps',
        '--disable-warning=ExperimentalWarning',
        outfile.path,
      ],
      stdin: JSON.stringify({ nonce, input } satisfies SandboxRequestDocument),
    });
    if ((outcome.signal === 'SIGABRT' || outcome.code === 134) && /heap out of memory|Reached heap limit/.test(outcome.logs)) {
      throw new SandboxError('memory', `${entry} used more than its ${this.limits.maxHeapMb} MB heap and was stopped`, outcome.logs);
    }
    try {
      const end = { entry, code: outcome.code, signal: outcome.signal, checkoutDir: copy };
      return { manifests: readAnswer(outcome.channel, nonce, end, defaultOutputLimits), logs: outcome.logs };
    } catch (err) {
      throw err instanceof SandboxError ? new SandboxError(err.reason, err.message, outcome.logs) : err;
    }
  }
}
