// The operator as the end-to-end scenarios run it: its own process, configured by the same
// flags as `preview-operator run` (src/config.ts), started by src/cli-run.ts startOperator.
// Two things the CLI has no flag for are added here: clone URLs of the bench's local
// repositories (file://, as `dev` passes them) and, on request, diagnostics of a stage.
// The bench runs it compiled (tsconfig.bench.json), as the image runs dist/src/main.js.
// stdin, each answered by one stdout JSON line:
//   "profile-start <µs>", "profile-stop <file>"  a CPU profile (inspector, one sample every <µs>);
//   "memory"                                {"benchMemory": OperatorMemorySample};
//   "heap-snapshot <file>"                  v8.writeHeapSnapshot → {"benchHeapSnapshot": {...}}.
// stdout: one line {"benchOperator": {webhookUrl, metricsUrl, pid, workers}} once serving, then the operator's own JSON log lines.
// BENCH_OPERATOR (JSON): { cloneUrls: { "owner/name": "file:///…" } }.
import { statSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import { loadConfig, type OperatorConfig } from '../src/config.js';
import { createLogger, type OperatorLogger } from '../src/logger.js';
import type { RepositoryFacts } from '../src/policy/pull-request-facts.js';
import { startOperator } from '../src/cli-run.js';
import { takeMemorySample } from './operator-memory.js';

interface EntryInput {
  cloneUrls: Record<string, string>;
}

const input = JSON.parse(process.env.BENCH_OPERATOR ?? '{"cloneUrls":{}}') as EntryInput;
const cloneUrl = (repository: RepositoryFacts) => {
  const url = input.cloneUrls[`${repository.owner}/${repository.name}`.toLowerCase()];
  if (!url) throw new Error(`no local clone URL for ${repository.owner}/${repository.name}`);
  return url;
};

let config: OperatorConfig;
try {
  config = loadConfig({ args: process.argv.slice(2), env: process.env, purpose: 'run' });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
const logger: OperatorLogger = createLogger({ level: config.logLevel });

interface Running {
  webhookUrl: string;
  metricsUrl: string;
  stop(): Promise<number>;
}

let operator: Running;
try {
  operator = await startOperator(config, { logger, cloneUrl });
} catch (err) {
  process.stderr.write(`bench operator could not start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(3);
}
// Workers per controller go with it: the bench relates the controllers' busy time to them.
const workers = { 'preview-environment': config.workers.previewEnvironment, algorithm: config.workers.algorithm, database: config.workers.database };
process.stdout.write(`${JSON.stringify({ benchOperator: { webhookUrl: operator.webhookUrl, metricsUrl: operator.metricsUrl, pid: process.pid, workers } })}\n`);

const session = new Session();
session.connect();
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  const code = await operator.stop();
  process.exit(code);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

for await (const line of createInterface({ input: process.stdin })) {
  if (line.startsWith('profile-start ')) {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: Number(line.slice('profile-start '.length)) });
    await session.post('Profiler.start');
    process.stdout.write(`${JSON.stringify({ benchProfile: 'started' })}\n`);
  } else if (line.startsWith('profile-stop ')) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(line.slice('profile-stop '.length), JSON.stringify(profile));
    process.stdout.write(`${JSON.stringify({ benchProfile: 'written' })}\n`);
  } else if (line === 'memory') {
    process.stdout.write(`${JSON.stringify({ benchMemory: takeMemorySample() })}\n`);
  } else if (line.startsWith('heap-snapshot ')) {
    // Blocks the event loop while V8 walks the heap (seconds), and needs memory of its own:
    // the bench asks for it only after it has read the burst's figures.
    const started = performance.now();
    const file = v8.writeHeapSnapshot(line.slice('heap-snapshot '.length));
    process.stdout.write(`${JSON.stringify({ benchHeapSnapshot: { file, bytes: statSync(file).size, ms: performance.now() - started } })}\n`);
  }
}
