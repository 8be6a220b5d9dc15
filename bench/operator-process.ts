// The operator as its own process, started as the image starts it: tsc output (tsconfig.bench.json)
// under node with the Dockerfile's flags and ENV — not tsx, whose loader and transpiling would count
// in its memory and CPU — and, on request, the standard profilers writing into the results folder:
// `--cpu-prof` (the whole run, written when it stops) and `--heapsnapshot-signal` (when asked).
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { testCaIssuer } from '../test/cluster/cert-manager.js';
import type { BenchEnvironment } from './bench-environment.js';
import { benchDomain } from './bench-preview.js';
import { imageRuntime } from './image-runtime.js';

export const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));
/** The PreviewEnvironment controller's workers (the default): the bare burst applies as many environments at a time. */
export const previewEnvironmentWorkers = 12;
export const resyncIntervalMs = 60_000;

/** Compiles with the project's tsc into .cache/bench-build (git-ignored); rejects with tsc's output. */
export async function compileOperator(): Promise<void> {
  const tsc = createRequire(path.join(repositoryRoot, 'package.json')).resolve('typescript/bin/tsc');
  const child = spawn(process.execPath, [tsc, '-p', 'tsconfig.bench.json', '--pretty', 'false'], { cwd: repositoryRoot });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`tsc -p tsconfig.bench.json failed (exit ${code}), and the bench runs its output:\n${output.trim()}`);
}

export interface OperatorProcess {
  webhookUrl: string;
  pid: number;
  /** Why it exited (with the end of its stderr), once it has. */
  exited(): string | undefined;
  /** Writes a heap snapshot into the results folder (with `heapSnapshot`); its file. */
  heapSnapshot(): Promise<string>;
  stop(): Promise<void>;
}

export interface OperatorOptions {
  secret: string;
  outDir: string;
  /** Default: all of them (scenario 1 runs `webhook` alone, as a webhook-only deployment). */
  controllers?: string;
  cloneUrls?: Record<string, string>;
  profile?: boolean;
  heapSnapshot?: boolean;
  /** A Certificate per preview from the test CA's ClusterIssuer (the cluster runs cert-manager); else plain HTTP. */
  tls?: boolean;
}

/** Node's flags and the `run` command's, as one would type them (no value holds a space). */
function commandLine(env: BenchEnvironment, options: OperatorOptions, scratch: string): string[] {
  const { outDir, secret, controllers = 'algorithm,database,preview-environment,webhook,resync' } = options;
  const entry = path.join(repositoryRoot, '.cache/bench-build/bench/operator-entry.js');
  return `${imageRuntime(repositoryRoot).nodeFlags.join(' ')}
    ${options.profile ? `--cpu-prof --cpu-prof-dir=${outDir} --cpu-prof-name=operator.cpuprofile` : ''}
    ${options.heapSnapshot ? `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${outDir}` : ''}
    ${entry} --controllers=${controllers} --leader-elect=false --log-level=info --resync-interval=${resyncIntervalMs / 1000}s
    --webhook-host=127.0.0.1 --webhook-port=0 --metrics-port=0 --dashboard-port=0 --webhook-secret=${secret} --preview-domain=${benchDomain}
    --github-api-url=${env.gh.url} --github-token=${env.gh.createToken('preview-operator-bot')} --github-throttle=false
    --tls-issuer=${options.tls ? `${testCaIssuer} --tls-mode=per-preview` : 'none'}
    --preview-environment-workers=${previewEnvironmentWorkers} --checkout-cache-dir=${scratch}
    --git-allowed-protocols=file,https`
    .split(/\s+/)
    .filter(Boolean);
}

/** Resolves with what the operator's line {"benchOperator": {webhookUrl, pid}} says, once it serves. */
function serving(lines: Interface, exit: Promise<string>, stderr: () => string): Promise<{ webhookUrl: string; pid: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the operator did not start within 120 s:\n${stderr()}`)), 120_000);
    void exit.then((why) => (clearTimeout(timer), reject(new Error(`the operator ${why}`))));
    lines.on('line', function started(line) {
      if (!line.startsWith('{"benchOperator":')) return;
      lines.off('line', started);
      clearTimeout(timer);
      resolve((JSON.parse(line) as { benchOperator: { webhookUrl: string; pid: number } }).benchOperator);
    });
  });
}

export async function startOperatorProcess(env: BenchEnvironment, options: OperatorOptions): Promise<OperatorProcess> {
  const scratch = mkdtempSync(path.join(tmpdir(), 'preview-bench-'));
  const BENCH_OPERATOR = JSON.stringify({ cloneUrls: options.cloneUrls ?? {} });
  const environment = { PATH: process.env.PATH ?? '', HOME: tmpdir(), KUBECONFIG: env.cluster.kubeconfigPath, BENCH_OPERATOR };
  const child = spawn(process.execPath, commandLine(env, options, scratch), {
    cwd: repositoryRoot,
    env: { ...environment, ...imageRuntime(repositoryRoot).env },
  });
  const log = createWriteStream(path.join(options.outDir, 'operator.log'), { flags: 'a' });
  let [stderr, exited] = ['', undefined as string | undefined];
  child.stderr.on('data', (d: Buffer) => void (log.write(d), (stderr = (stderr + d.toString('utf8')).slice(-3000))));
  const exit = new Promise<string>((resolve) => child.once('close', (code, signal) => resolve(`exited (${code ?? signal}):\n${stderr}`)));
  void exit.then((why) => ((exited = why), log.end()));
  const lines = createInterface({ input: child.stdout }).on('line', (line) => log.write(`${line}\n`));
  const started = await serving(lines, exit, () => stderr);
  return {
    ...started,
    exited: () => exited,
    async heapSnapshot() {
      const before = new Set(readdirSync(options.outDir));
      child.kill('SIGUSR2');
      // V8 writes it on the main thread, blocking the operator for seconds; done when it stops growing.
      for (let last = -1, deadline = Date.now() + 180_000; Date.now() < deadline; await sleep(1000)) {
        const file = readdirSync(options.outDir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
        const size = file ? statSync(path.join(options.outDir, file)).size : -1;
        if (file && size > 0 && size === last) return path.join(options.outDir, file);
        last = size;
      }
      throw new Error('no heap snapshot after 180 s');
    },
    async stop() {
      const timer = exited ? undefined : setTimeout(() => child.kill('SIGKILL'), 30_000);
      if (!exited) child.kill('SIGTERM');
      await exit;
      clearTimeout(timer);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
