// The operator as the bench runs it (operator-process.ts): `preview-operator run`'s flags and
// startOperator, plus what the CLI has no flag for — clone URLs of the bench's local repositories
// (BENCH_OPERATOR: {"cloneUrls": {"owner/name": "file:///…"}}, as `dev` passes them). stdout:
// {"benchOperator": {webhookUrl, pid}} once serving, then its JSON log. SIGTERM stops it.
import { loadConfig, type OperatorConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import type { RepositoryFacts } from '../src/policy/pull-request-facts.js';
import { startOperator } from '../src/cli-run.js';

const input = JSON.parse(process.env.BENCH_OPERATOR ?? '{"cloneUrls":{}}') as { cloneUrls: Record<string, string> };
// Repositories the bench did not list keep the clone URL their payload names (scenario 1 lists none).
const cloneUrl = (repository: RepositoryFacts) =>
  input.cloneUrls[`${repository.owner}/${repository.name}`.toLowerCase()] ?? repository.cloneUrl;

let config: OperatorConfig;
try {
  config = loadConfig({ args: process.argv.slice(2), env: process.env, purpose: 'run' });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
const operator = await startOperator(config, { logger: createLogger({ level: config.logLevel }), cloneUrl }).catch((err: Error) => {
  process.stderr.write(`bench operator could not start: ${err.stack ?? String(err)}\n`);
  process.exit(3);
});
process.stdout.write(`${JSON.stringify({ benchOperator: { webhookUrl: operator.webhookUrl, pid: process.pid } })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  process.exit(await operator.stop());
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
