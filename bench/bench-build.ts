// Compiles the operator and the bench's child entries with tsc (tsconfig.bench.json, which
// extends the image's tsconfig.build.json) into .cache/bench-build, so the bench measures the
// operator as the image runs it: plain JavaScript under node, no loader, no transpiling.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { repositoryRoot } from './child-process.js';

export const benchTsconfig = 'tsconfig.bench.json';

export class BenchCompileError extends Error {
  constructor(readonly output: string, exitCode: number | null) {
    super(`tsc -p ${benchTsconfig} failed (exit ${exitCode}); the bench measures the compiled operator and cannot run without it:\n${output.trim()}`);
  }
}

/** Runs the project's own tsc once; resolves with how long it took, rejects with the compiler's output. */
export async function compileBenchEntries(): Promise<{ ms: number }> {
  // The project's TypeScript, by path: the same compiler as `npm run build`, without npx's lookup.
  const tsc = createRequire(path.join(repositoryRoot, 'package.json')).resolve('typescript/bin/tsc');
  const started = performance.now();
  const child = spawn(process.execPath, [tsc, '-p', benchTsconfig, '--pretty', 'false'], { cwd: repositoryRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  });
  if (code !== 0) throw new BenchCompileError(output, code);
  return { ms: performance.now() - started };
}
