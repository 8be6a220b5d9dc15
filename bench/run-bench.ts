// `npm run bench`: compiles the operator and the bench's child entries with tsc (the image runs
// compiled JavaScript, so the bench does too), runs the chosen scenarios (independent ones first,
// then end to end against the operator as its own process), each step on a local control plane
// and a GitHub emulator of its own, prints a table and writes results.json, results.md and
// latency.svg under bench/results/<timestamp>/. A fresh control plane per step keeps each step's
// figures its own, whichever ran before: after scenario 1's 7,500 PreviewEnvironment writes and
// deletes the API server's RSS is 1.2 GB (0.1 GB fresh), and its collector's work grows with it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBenchArgs, type BenchArgs } from './bench-args.js';
import { BenchCompileError, benchTsconfig, compileBenchEntries } from './bench-build.js';
import { startBenchEnvironment, type BenchEnvironment } from './bench-environment.js';
import { benchBuildDir, repositoryRoot } from './child-process.js';
import { timeFixedCpuWork } from './machine-speed.js';
import { renderDistributionSvg } from './distribution-plot.js';
import type { ScenarioResult } from './figures.js';
import { renderMarkdownTable, renderTextTable } from './results-table.js';
import { scenarioPlan } from './scenario-plan.js';
import { imageRuntime } from './image-runtime.js';

const args: BenchArgs = (() => {
  try {
    return parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n`);
    process.exit(2);
  }
})();

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outDir = path.resolve(repositoryRoot, args.out ?? path.join('bench/results', stamp));
mkdirSync(outDir, { recursive: true });
const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loadAtStart = loadAverage();
const speedAtStart = timeFixedCpuWork();
const started = Date.now();

// Before anything is started: a compile error ends the run at once, with tsc's own words.
log(`compiling with tsc -p ${benchTsconfig} into ${path.relative(repositoryRoot, benchBuildDir)}/`);
const compileSeconds = await compileBenchEntries().then(({ ms }) => ms / 1000, (err: unknown) => {
  process.stderr.write(`bench: ${err instanceof BenchCompileError ? err.message : (err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
log(`compiled in ${compileSeconds.toFixed(1)} s`);
const results: ScenarioResult[] = [];
for (const step of scenarioPlan(args)) {
  log(`scenario ${step.scenarios.join('+')}: ${step.title}`);
  let env: BenchEnvironment | undefined;
  let stepStarted = Date.now();
  try {
    env = await startBenchEnvironment(log);
    log(`a control plane and a GitHub emulator of its own, up in ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
    stepStarted = Date.now();
    const out = await step.run(env, { ...args, outDir, log });
    for (const r of out) results.push({ ...r, durationMs: r.durationMs ?? Date.now() - stepStarted });
  } catch (err) {
    log(`scenario ${step.scenarios.join('+')} failed: ${(err as Error).stack ?? String(err)}`);
    for (const scenario of step.scenarios) {
      results.push({ scenario, title: step.title, figures: [], samples: {}, notes: [], error: (err as Error).message, durationMs: Date.now() - stepStarted });
    }
  } finally {
    await env?.stop().catch((err) => log(`stopping the environment: ${(err as Error).message}`));
  }
  log(`scenario ${step.scenarios.join('+')} done in ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
}
results.sort((a, b) => a.scenario - b.scenario);

const totalS = (Date.now() - started) / 1000;
const speedAtEnd = timeFixedCpuWork();
const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; load average ${loadAtStart} at the start, ${loadAverage()} at the end (other work shares these cores); a fixed CPU task (5,000 JSON round trips of a Deployment-sized object, one thread, best of 3: bench/machine-speed.ts) took ${speedAtStart.toFixed(0)} ms at the start and ${speedAtEnd.toFixed(0)} ms at the end`;
const table = renderTextTable(results, { check: args.check });
process.stdout.write(`\n${table}\n`);
const series = results.flatMap((r) => Object.entries(r.samples).map(([label, samples]) => ({ label, samples })));
writeFileSync(path.join(outDir, 'latency.svg'), renderDistributionSvg(series, { title: `preview-operator bench ${stamp}` }));
writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify({ startedAt: new Date(started).toISOString(), totalSeconds: totalS, compileSeconds, machine, fixedCpuTaskMs: { start: speedAtStart, end: speedAtEnd }, args, results }, null, 2)}\n`);
const image = imageRuntime(repositoryRoot);
const md = [
  `# preview-operator bench, ${new Date(started).toISOString()}`,
  '',
  `Machine: ${machine}. Scenarios ${args.scenarios.join(', ')}${args.quick ? ' (quick)' : ''}; ${totalS.toFixed(0)} s in all.`,
  '',
  `The bench's child processes (the operator; scenario 1's webhook receiver) ran compiled, as the image runs the operator: \`tsc -p ${benchTsconfig}\` (${compileSeconds.toFixed(1)} s, before the clock of any scenario), then \`node ${image.nodeFlags.join(' ')} ${path.relative(repositoryRoot, benchBuildDir)}/bench/<entry>.js\` with the Dockerfile's ENV (${Object.entries(image.env).map(([k, v]) => `${k}=${v}`).join(' ')}).`,
  '',
  renderMarkdownTable(results, { check: true }),
  ...results.filter((r) => r.notes.length > 0 || r.error).flatMap((r) => [
    `## ${r.scenario}. ${r.title}`, '', ...(r.error ? [`Not run: ${r.error}`, ''] : []), ...r.notes.map((n) => `- ${n}`), '',
  ]),
  '![latency distributions](latency.svg)',
  '',
].join('\n');
writeFileSync(path.join(outDir, 'results.md'), md);
log(`results in ${path.relative(repositoryRoot, outDir)}/ (results.json, results.md, latency.svg); ${totalS.toFixed(0)} s`);
process.exit(0);
