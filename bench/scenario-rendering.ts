// Scenario 7, rendering. Built-in: examples/repository/.preview/preview.yaml through the
// controller's in-process path (validate, chart, split, policy) for N distinct environments.
// Sandbox: the same repository's `.preview/main.ts` run M times by the real Sandbox (a fresh
// Node process each time, as the operator does).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Sandbox } from '../src/synth/sandbox.js';
import * as render from '../src/synth/render-preview.js';
import { benchRenderSettings, benchSpec, renderLikeTheController, validConfig } from './bench-preview.js';
import { atMost, figure, type Measured } from './figures.js';
import { summarize } from './stats.js';

const exampleRepository = fileURLToPath(new URL('../examples/repository/', import.meta.url));
const exampleYaml = readFileSync(new URL('../examples/repository/.preview/preview.yaml', import.meta.url), 'utf8');
const spec = (n: number) => benchSpec('alien6', 'reco', n, n.toString(16).padStart(40, 'e'), 'https://github.com/alien6/reco.git');

export async function rendering(options: { renders: number; sandboxRuns: number }): Promise<Measured> {
  // The first rendering in a process pays for loading and compiling cdk8s: reported apart.
  let t = performance.now();
  const first = renderLikeTheController('pr-1-reco', spec(1), exampleYaml);
  const coldMs = performance.now() - t;
  const builtIn: number[] = [];
  for (let n = 2; n <= options.renders + 1; n++) {
    t = performance.now();
    renderLikeTheController(`pr-${n}-reco`, spec(n), exampleYaml);
    builtIn.push(performance.now() - t);
  }
  const sandbox = new Sandbox();
  const config = validConfig(exampleYaml);
  const runs: number[] = [];
  for (let i = 1; i <= options.sandboxRuns; i++) {
    const s = spec(1000 + i);
    const identity = render.previewIdentity(`pr-${1000 + i}-reco`, s, config, s.pullRequest.headSha, benchRenderSettings.domain);
    t = performance.now();
    await sandbox.run({ checkoutDir: exampleRepository, input: render.previewChartProps(identity, s, config, benchRenderSettings) });
    runs.push(performance.now() - t);
  }
  return {
    figures: [
      figure(7, 'built-in chart per environment, median', summarize(builtIn).p50, 'ms', atMost(20, '≤ 20 ms')),
      figure(7, 'built-in chart, first in the process (cold)', coldMs, 'ms'),
      figure(7, 'sandbox main.ts per run (bundle + a fresh Node process), median', summarize(runs).p50, 'ms', atMost(1000, '≤ 1 s')),
    ],
    notes: [`Built-in: ${first.objects.length + 1} objects, ${options.renders} renders after a cold one.`],
  };
}
