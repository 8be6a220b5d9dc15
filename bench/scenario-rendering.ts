// Scenario 7, rendering. Built-in: examples/repository/.preview/preview.yaml through the
// controller's in-process path (validate, chart, split, policy) for N distinct environments.
// Sandbox: the same repository's `.preview/main.ts` run M times by the real Sandbox (a fresh
// Node process each time, as the operator does), split into bundling and running.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Sandbox } from '../src/synth/sandbox.js';
import { previewChartProps, previewIdentity } from '../src/synth/render-preview.js';
import { benchRenderSettings, benchSpec, renderLikeTheController, validConfig } from './bench-preview.js';
import type { StepResult } from './scenario-plan.js';
import { summarize } from './stats.js';

const exampleRepository = fileURLToPath(new URL('../examples/repository/', import.meta.url));
const exampleYaml = readFileSync(new URL('../examples/repository/.preview/preview.yaml', import.meta.url), 'utf8');

export async function rendering(options: { renders: number; sandboxRuns: number; log(line: string): void }): Promise<StepResult> {
  const spec = (n: number) => benchSpec('alien6', 'reco', n, n.toString(16).padStart(40, 'e'), 'https://github.com/alien6/reco.git');

  // The first rendering in a process pays for loading and JIT-compiling cdk8s: reported apart.
  let t = performance.now();
  const first = renderLikeTheController('pr-1-reco', spec(1), exampleYaml);
  const coldMs = performance.now() - t;
  const builtIn: number[] = [];
  for (let n = 2; n <= options.renders + 1; n++) {
    t = performance.now();
    renderLikeTheController(`pr-${n}-reco`, spec(n), exampleYaml);
    builtIn.push(performance.now() - t);
  }
  const b = summarize(builtIn);

  const sandbox = new Sandbox();
  const config = validConfig(exampleYaml);
  const total: number[] = [];
  const bundle: number[] = [];
  const run: number[] = [];
  let objects = 0;
  for (let i = 1; i <= options.sandboxRuns; i++) {
    const s = spec(1000 + i);
    const identity = previewIdentity(`pr-${1000 + i}-reco`, s, config, s.pullRequest.headSha, benchRenderSettings.domain);
    t = performance.now();
    const result = await sandbox.run({ checkoutDir: exampleRepository, input: previewChartProps(identity, s, config, benchRenderSettings) });
    total.push(performance.now() - t);
    bundle.push(result.bundleMs);
    run.push(result.runMs);
    objects = result.manifests.length;
  }
  const sb = summarize(total);
  return {
    scenario: 7,
    title: 'Rendering',
    figures: [
      { scenario: 7, name: 'built-in chart per environment, median', value: b.p50, unit: 'ms', target: { op: '<=', value: 20, text: '≤ 20 ms per environment' } },
      { scenario: 7, name: 'built-in chart per environment, p95', value: b.p95, unit: 'ms' },
      { scenario: 7, name: 'built-in chart, first in the process (cold)', value: coldMs, unit: 'ms' },
      { scenario: 7, name: 'sandbox main.ts per run, median', value: sb.p50, unit: 'ms', target: { op: '<=', value: 1000, text: '≤ 1 s in the sandbox' } },
      { scenario: 7, name: 'sandbox per run, max', value: sb.max, unit: 'ms' },
      { scenario: 7, name: 'sandbox: bundling (esbuild), median', value: summarize(bundle).p50, unit: 'ms' },
      { scenario: 7, name: 'sandbox: child process run, median', value: summarize(run).p50, unit: 'ms' },
    ],
    samples: { 'S7 built-in chart render': builtIn, 'S7 sandbox run (bundle + process)': total },
    notes: [
      `Built-in: examples/repository/.preview/preview.yaml (${first.objects.length + 1} objects) through validate → PreviewEnvironmentChart → split → policy, ${options.renders} distinct environments after one cold render.`,
      `Sandbox: examples/repository/.preview/main.ts (${objects} objects), ${options.sandboxRuns} runs of src/synth/sandbox.ts, each bundling with esbuild and starting a fresh Node process under the permission model.`,
    ],
  };
}
