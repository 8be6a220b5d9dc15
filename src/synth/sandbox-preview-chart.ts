// The chart factory the sandbox uses for previews: inside the sandboxed process it builds the
// PreviewEnvironmentChart from the same props the operator would use without `.preview/main.ts`,
// hands it (and its context) to the repository's function, and synthesises the chart, whose
// toJson() stamps the ownership labels on every object, including those the function added.
import { App } from 'cdk8s';
import { PreviewEnvironmentChart, type PreviewEnvironmentChartProps } from '../../constructs/index.js';
import type { SandboxChart } from './sandbox-harness.js';

/** What the operator sends into the sandbox for a preview: the chart's props, all plain data. */
export type PreviewSandboxInput = PreviewEnvironmentChartProps;

export function createSandboxChart(input: unknown): SandboxChart {
  const app = new App();
  const chart = new PreviewEnvironmentChart(app, 'preview', input as PreviewSandboxInput);
  return {
    chart,
    context: chart.context,
    synth: () => {
      // Objects in a Chart of their own would miss the environment's namespace and ownership.
      if (app.charts.some((other) => other !== chart)) {
        throw new Error('main.ts must add its constructs to the chart it receives; it created another Chart');
      }
      return chart.toJson();
    },
  };
}
