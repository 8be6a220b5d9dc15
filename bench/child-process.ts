// Helpers for the bench's child processes: start one with tsx, read its JSON lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

export interface JsonLineChild {
  child: ChildProcess;
  /** The next stdout line that parses as JSON (other lines are skipped), or a rejection if the child exits first. */
  nextJson<T>(timeoutMs?: number, match?: (value: any) => boolean): Promise<T>;
  send(line: string): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of stderr, for error messages. */
  stderrTail(): string;
  hasExited(): boolean;
}

export function spawnTsx(script: string, args: string[], env: Record<string, string>, options: { nodeArgs?: string[]; logFile?: string } = {}): JsonLineChild {
  const nodeArgs = options.nodeArgs ?? [];
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], {
    cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  const reader: Interface = createInterface({ input: child.stdout! });
  reader.on('line', (line) => {
    log?.write(`${line}\n`);
    lines.push(line);
    if (lines.length > 10_000) lines.splice(0, lines.length - 10_000);
    for (const w of waiters.splice(0)) w();
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    log?.write(d);
    stderr = (stderr + d.toString('utf8')).slice(-20_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    for (const w of waiters.splice(0)) w();
    resolve();
  }));
  return {
    child,
    async nextJson<T>(timeoutMs = 120_000, match: (value: any) => boolean = () => true): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (lines.length > 0) {
          const line = lines.shift()!;
          if (!line.startsWith('{')) continue;
          let value: unknown;
          try {
            value = JSON.parse(line);
          } catch {
            continue;
          }
          if (match(value)) return value as T;
        }
        if (exited) throw new Error(`${script} exited (code ${child.exitCode}, signal ${child.signalCode}):\n${stderr.slice(-3000)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${script}: no answer within ${timeoutMs} ms:\n${stderr.slice(-3000)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
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
