// `npm run bench`: compiles the operator (the image runs compiled JavaScript, so the bench does too),
// runs the chosen scenarios, each step on a control plane and GitHub emulator of its own, prints every
// figure beside its target and the gap, and writes results.json and results.md under bench/results/.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs } from './bench-args.js';
import { startBenchEnvironment, type BenchEnvironment } from './bench-environment.js';
import { compileOperator, repositoryRoot } from './operator-process.js';
import { renderTable, type ScenarioResult } from './figures.js';
import { counts, scenarioPlan } from './scenario-plan.js';

/** Ends the run with `code`, saying why (bad arguments: 2; the operator does not compile: 1). */
const fail = (code: number) => (err: Error) => (process.stderr.write(`bench: ${err.message}\n`), process.exit(code));
const args = await Promise.resolve(process.argv.slice(2)).then(parseBenchArgs).catch(fail(2));
const started = new Date();
const outDir = path.resolve(repositoryRoot, args.out ?? path.join('bench/results', started.toISOString().replace(/[:.]/g, '-')));
mkdirSync(outDir, { recursive: true });
const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadAtStart = loadAverage();

log('compiling with tsc -p tsconfig.bench.json');
await compileOperator().catch(fail(1));
const results: ScenarioResult[] = [];
for (const step of scenarioPlan(args)) {
  log(`${step.title}`);
  let env: BenchEnvironment | undefined;
  try {
    env = await startBenchEnvironment(log, step.environments, step.certManager);
    results.push(...(await step.run(env, { ...args, outDir, log, counts: counts(args.quick) })));
  } catch (err) {
    log(`${step.title} failed: ${(err as Error).stack ?? String(err)}`);
    results.push({ scenario: 0, title: step.title, figures: [], notes: [], error: (err as Error).message });
  } finally {
    await env?.stop().catch((err) => log(`stopping the environment: ${(err as Error).message}`));
  }
}
results.sort((a, b) => a.scenario - b.scenario);

const seconds = (Date.now() - started.getTime()) / 1000;
const machine = `${os.cpus().length} cores, Node ${process.version}; load average ${loadAtStart} at the start, ${loadAverage()} at the end`;
process.stdout.write(`\n${renderTable(results)}\n`);
const json = { startedAt: started.toISOString(), seconds, machine, args, results };
writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify(json, null, 2)}\n`);
const markdown = [
  `# preview-operator bench, ${started.toISOString()}`,
  '',
  `${machine}. Scenarios ${args.scenarios}, bursts ${args.bursts}${args.quick ? ' (quick)' : ''}; ${seconds.toFixed(0)} s.`,
  '',
  renderTable(results),
  ...results.filter((r) => r.notes.length > 0).flatMap((r) => [`## ${r.scenario}. ${r.title}`, '', ...r.notes.map((n) => `- ${n}`), '']),
];
writeFileSync(path.join(outDir, 'results.md'), markdown.join('\n'));
log(`results in ${path.relative(repositoryRoot, outDir)}/; ${seconds.toFixed(0)} s`);
process.exit(0);
