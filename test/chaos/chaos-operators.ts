// The operator as the product runs it, for the chaos run: compiled with the project's tsc
// (tsconfig.build.json) into .cache/chaos-build, started as `node <the Dockerfile's flags>
// src/main.js run <flags>` — the image's entry point — one child process per replica, leader
// election on. A replica that exits — killed with SIGKILL, or by itself — is started again 3 s
// later under the same identity, as Kubernetes restarts a pod's container.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { imageRuntime } from '../../bench/image-runtime.js';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const buildDir = path.join(repositoryRoot, '.cache/chaos-build');

/** Compiles src/ and constructs/ as `npm run build` does, into .cache/chaos-build; rejects with tsc's output. */
export async function compileOperator(): Promise<void> {
  const tsc = createRequire(path.join(repositoryRoot, 'package.json')).resolve('typescript/bin/tsc');
  const args = [
    tsc,
    '-p',
    'tsconfig.build.json',
    '--outDir',
    buildDir,
    '--incremental',
    '--tsBuildInfoFile',
    path.join(buildDir, '.tsbuildinfo'),
    '--pretty',
    'false',
  ];
  const child = spawn(process.execPath, args, { cwd: repositoryRoot });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('close', resolve));
  if (code !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit ${code}):\n${output.trim()}`);
}

export interface ReplicaOptions {
  identity: string;
  /** `run`'s flags (besides the identity and the ports). */
  flags: string[];
  kubeconfigPath: string;
  logDir: string;
}

/** One replica: started, killed with SIGKILL, started again; its URLs from its "operator started" log line. */
export class OperatorReplica {
  webhookUrl: string | undefined;
  metricsUrl: string | undefined;
  starts = 0;
  kills = 0;
  /** Exits nobody asked for (not a kill, not a stop). */
  exits = 0;
  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private stopping = false;
  private restarting: Promise<void> | undefined;

  constructor(private readonly options: ReplicaOptions) {
    mkdirSync(options.logDir, { recursive: true });
  }

  /** Running and serving (its "operator started" line seen), so a Service would route to it. */
  get routable(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null && this.webhookUrl !== undefined;
  }

  /** Starts the process; resolves once it serves (rejects if it exits first or takes longer than 120 s). */
  async start(): Promise<void> {
    this.starts += 1;
    this.webhookUrl = undefined;
    this.metricsUrl = undefined;
    const { nodeFlags, env } = imageRuntime(repositoryRoot);
    const entry = path.join(buildDir, 'src/main.js');
    const args = [...nodeFlags, entry, 'run', `--leader-election-identity=${this.options.identity}`, ...this.options.flags];
    const child = spawn(process.execPath, args, {
      cwd: repositoryRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', KUBECONFIG: this.options.kubeconfigPath, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.log = createWriteStream(path.join(this.options.logDir, `${this.options.identity}.log`), { flags: 'a' });
    const log = this.log;
    log.write(`{"chaos":"start ${this.starts}"}\n`);
    child.stderr!.on('data', (d: Buffer) => log.write(d));
    const kills = this.kills;
    child.once('exit', () => {
      this.webhookUrl = undefined;
      if (this.stopping) return;
      if (this.kills === kills) this.exits += 1;
      this.restarting = new Promise((r) => setTimeout(r, 3000)).then(() => this.start()).catch(() => {});
    });
    const started = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.options.identity} did not start within 120 s`)), 120_000);
      child.once('exit', (code, signal) => (clearTimeout(timer), reject(new Error(`${this.options.identity} exited (${code ?? signal})`))));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        log.write(`${line}\n`);
        if (this.webhookUrl || !line.includes('"operator started"')) return;
        const fields = JSON.parse(line) as { webhook: string; metrics: string };
        [this.webhookUrl, this.metricsUrl] = [fields.webhook, fields.metrics];
        clearTimeout(timer);
        resolve();
      });
    });
    started.catch(() => {});
    await started;
  }

  /** SIGKILL: no drain, no lease release, queued writes lost with the process; started again 3 s later. */
  kill(): void {
    this.kills += 1;
    this.webhookUrl = undefined;
    this.child?.kill('SIGKILL');
  }

  /** Resolves once a restart under way has served (or failed). */
  async restarted(): Promise<void> {
    await this.restarting;
  }

  /** Whether it holds the lease (its `preview_operator_leader` metric); false when it does not answer. */
  async leading(): Promise<boolean> {
    if (!this.routable || !this.metricsUrl) return false;
    try {
      const text = await (await fetch(this.metricsUrl, { signal: AbortSignal.timeout(2000) })).text();
      return /^preview_operator_leader 1$/m.test(text);
    } catch {
      return false;
    }
  }

  /** Graceful stop (SIGTERM), at most 30 s. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.restarting;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
    this.log?.end();
  }
}
