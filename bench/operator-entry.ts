// The operator as the bench runs it (operator-process.ts): `run`'s flags and startOperator, plus the bench's
// local clone URLs (BENCH_OPERATOR: {"cloneUrls": {"owner/name": "file:///…"}}, as `dev` passes them).
// stdout: {"benchOperator": {webhookUrl, pid}} once serving, then its JSON log. SIGTERM stops it.
import '../src/own-source-maps.js'; // first, as in main.ts: the operator loads after it
import type { RepositoryFacts } from '../src/policy/pull-request-facts.js';
const { loadConfig } = await import('../src/config.js');
const { createLogger } = await import('../src/logger.js');
const { startOperator } = await import('../src/cli-run.js');

const input = JSON.parse(process.env.BENCH_OPERATOR ?? '{"cloneUrls":{}}') as { cloneUrls: Record<string, string> };
// Repositories the bench did not list keep the clone URL their payload names (scenario 1 lists none).
const cloneUrl = (repository: RepositoryFacts) =>
  input.cloneUrls[`${repository.owner}/${repository.name}`.toLowerCase()] ?? repository.cloneUrl;

const exit = (code: number, message: string) => (process.stderr.write(`${message}\n`), process.exit(code));
const options = { args: process.argv.slice(2), env: process.env, purpose: 'run' as const };
const config = await (async () => loadConfig(options))().catch((err: Error) => exit(2, err.message));
const operator = await startOperator(config, { logger: createLogger({ level: config.logLevel }), cloneUrl }).catch((err: Error) =>
  exit(3, `bench operator could not start: ${err.stack ?? String(err)}`),
);
process.stdout.write(`${JSON.stringify({ benchOperator: { webhookUrl: operator.webhookUrl, pid: process.pid } })}\n`);

let stopping: Promise<never> | undefined; // once, whichever signal comes first
const stop = () => void (stopping ??= operator.stop().then((code) => process.exit(code)));
process.on('SIGTERM', stop).on('SIGINT', stop);
