// One sandboxed Node process, watched: the isolated command (sandbox-isolation.ts), the request
// on stdin, the answer on fd 3, stdout and stderr kept as logs (tail-truncated), and the limits
// enforced by killing it: wall-clock time, resident memory (polled), answer size.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { SandboxError } from './sandbox-error.js';
import { isolatedCommand, type SandboxIdentity } from './sandbox-isolation.js';

export interface ProcessLimits {
  timeoutMs: number;
  maxRssMb: number;
  maxOutputBytes: number;
  maxLogBytes: number;
}

export interface ProcessRequest {
  tools: Record<string, string>;
  identity: SandboxIdentity;
  /** The directories the run reads (its own, Node's, the packages'), kept visible in its mount namespace. */
  keep: readonly string[];
  nodePath: string;
  nodeArgs: string[];
  cwd: string;
  /** Written to stdin, then stdin is closed. */
  stdin: string;
  /** Names the program in messages, e.g. `.preview/main.ts`. */
  entry: string;
  limits: ProcessLimits;
}

export interface ProcessOutcome {
  channel: string;
  logs: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** All a run may print, kept or not: printing is cheap for it and costs the operator a copy per chunk. */
const maxLogTotal = 16 * 1024 * 1024;

/** The last `limit` bytes of what was printed, without copying on every chunk. */
class LogTail {
  private chunks: Buffer[] = [];
  private kept = 0;
  total = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.chunks.length > 1 && this.kept - this.chunks[0]!.length >= this.limit) this.kept -= this.chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.limit)).toString('utf8');
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

async function residentMb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined; // already gone
  }
}

/** Runs the process to its end; rejects with a SandboxError when a limit stopped it. */
export function runSandboxProcess(request: ProcessRequest): Promise<ProcessOutcome> {
  const { limits, entry } = request;
  const { command, args } = isolatedCommand(request.tools, request.identity, request.keep, request.nodePath, request.nodeArgs);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: request.cwd, env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const answer: Buffer[] = [];
    let answerBytes = 0;
    const logs = new LogTail(limits.maxLogBytes);
    let stopped: SandboxError | undefined;
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
        if (mb !== undefined && mb > limits.maxRssMb)
          stop('memory', `${entry} used more than ${limits.maxRssMb} MB of memory and was stopped`);
      });
    }, 50);
    const keepLog = (chunk: Buffer) => {
      logs.push(chunk);
      if (logs.total > maxLogTotal) stop('bad-output', `${entry} printed more than ${maxLogTotal} bytes of logs and was stopped`);
    };
    child.stdout!.on('data', keepLog);
    child.stderr!.on('data', keepLog);
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (chunk: Buffer) => {
      answerBytes += chunk.length;
      if (answerBytes > limits.maxOutputBytes)
        return stop('bad-output', `${entry} produced more than ${limits.maxOutputBytes} bytes of output`);
      answer.push(chunk);
    });
    child.stdin!.on('error', () => {}); // a child that dies early closes its stdin; the exit says why
    child.stdin!.end(request.stdin);
    const done = () => {
      clearTimeout(timer);
      clearInterval(memoryWatch);
    };
    child.on('error', (err) => {
      done();
      reject(new Error(`could not start the sandbox process: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      done();
      const text = logs.text();
      if (stopped) return reject(new SandboxError(stopped.reason, stopped.message, text));
      resolve({ channel: Buffer.concat(answer).toString('utf8'), logs: text, code, signal });
    });
  });
}
