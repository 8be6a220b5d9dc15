// The bench's child processes (the operator, the webhook receiver of scenario 1): started the
// way the image starts the operator — tsc output under node, with the Dockerfile's node flags and ENV
// — never through tsx, whose loader thread and on-the-fly transpiling would be counted in the
// child's memory and CPU. They talk JSON lines: the bench writes commands on stdin and waits for
// the answer lines on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { imageRuntime } from './image-runtime.js';

export const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/** Where tsconfig.bench.json compiles to (git-ignored with .cache/). */
export const benchBuildDir = path.join(repositoryRoot, '.cache/bench-build');

/** The bench entries compiled by tsconfig.bench.json. */
export type BenchEntry = 'operator-entry' | 'webhook-intake-server' | 'speed-probe';

export function compiledEntryPath(entry: BenchEntry): string {
  return path.join(benchBuildDir, 'bench', `${entry}.js`);
}

export interface JsonLineChild {
  child: ChildProcess;
  /**
   * The next stdout JSON line that `match` accepts (lines that are not JSON are skipped), or a
   * rejection if the child exits or `timeoutMs` passes first. Several waits may be pending at
   * once: each line goes to the oldest wait that accepts it, and lines no wait accepts are kept
   * (the most recent 10,000) for later waits.
   */
  nextJson<T>(timeoutMs?: number, match?: (value: any) => boolean): Promise<T>;
  send(line: string): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of stderr, for error messages. */
  stderrTail(): string;
  hasExited(): boolean;
}

interface Waiter {
  match(value: unknown): boolean;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/**
 * The JSON values of a child's stdout lines, handed to whoever waits for them: each value goes
 * to the oldest pending wait that accepts it; values nobody waits for are kept (the most recent
 * `keep`) for later waits. Lines that are not JSON objects are ignored.
 */
export class JsonLines {
  private readonly kept: unknown[] = [];
  private readonly waiters: Waiter[] = [];
  private closed: (() => Error) | undefined;

  constructor(private readonly keep = 10_000) {}

  push(line: string): void {
    if (!line.startsWith('{')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return;
    }
    const waiter = this.waiters.find((w) => w.match(value));
    if (waiter) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve(value);
      return;
    }
    this.kept.push(value);
    if (this.kept.length > this.keep) this.kept.splice(0, this.kept.length - this.keep);
  }

  /** No more lines will come: pending and later waits without a kept match reject with `error()`. */
  close(error: () => Error): void {
    this.closed = error;
    for (const w of this.waiters.splice(0)) w.reject(error());
  }

  next<T>(timeoutMs: number, match: (value: any) => boolean, timeoutError: () => Error): Promise<T> {
    const i = this.kept.findIndex((v) => match(v));
    if (i >= 0) return Promise.resolve(this.kept.splice(i, 1)[0] as T);
    if (this.closed) return Promise.reject(this.closed());
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(timeoutError());
      }, timeoutMs);
      const waiter: Waiter = {
        match,
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.push(waiter);
    });
  }
}

/**
 * Starts a compiled bench entry as the image starts the operator: `node <the ENTRYPOINT's node
 * flags> .cache/bench-build/bench/<entry>.js` with the image's ENV (image-runtime.ts), on one
 * CPU with `cpu`. The entries must have been compiled first (run-bench does it once, bench-build.ts).
 */
export function startBenchChild(entry: BenchEntry, args: string[], env: Record<string, string>, options: { logFile?: string; cpu?: number } = {}): JsonLineChild {
  const script = compiledEntryPath(entry);
  if (!existsSync(script)) throw new Error(`${path.relative(repositoryRoot, script)} does not exist: compile the bench entries first (npx tsc -p tsconfig.bench.json; npm run bench does it)`);
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const image = imageRuntime(repositoryRoot);
  const argv = [process.execPath, ...image.nodeFlags, script, ...args];
  // Pinned with taskset, which execs node in its place: the pid is node's.
  const [command, ...commandArgs] = options.cpu === undefined ? argv : ['taskset', '-c', String(options.cpu), ...argv];
  const child = spawn(command!, commandArgs, {
    cwd: repositoryRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...image.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines = new JsonLines();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    log?.write(`${line}\n`);
    lines.push(line);
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    log?.write(d);
    stderr = (stderr + d.toString('utf8')).slice(-20_000);
  });
  let exited = false;
  const exitError = () => new Error(`${entry} exited (code ${child.exitCode}, signal ${child.signalCode}):\n${stderr.slice(-3000)}`);
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));
  // After 'exit' the pipes may still deliver the last lines: waits end once they are drained.
  child.once('close', () => {
    lines.close(exitError);
    log?.end();
  });
  // A command sent to a child that has just died: its exit is what the waits report.
  child.stdin!.on('error', () => {});
  // A command that could not be started (taskset missing) has no 'exit': it ends here, 'close'
  // follows, and the waits say why.
  child.once('error', (err) => {
    stderr += `\n${err.message}`;
    if (child.pid === undefined) exited = true;
  });
  return {
    child,
    nextJson<T>(timeoutMs = 120_000, match: (value: any) => boolean = () => true): Promise<T> {
      return lines.next<T>(timeoutMs, match, () => new Error(`${entry}: no answer within ${timeoutMs} ms:\n${stderr.slice(-3000)}`));
    },
    send(line: string) {
      child.stdin!.write(`${line}\n`);
    },
    async stop(graceMs = 30_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
    stderrTail: () => stderr.slice(-3000),
    hasExited: () => exited,
  };
}
