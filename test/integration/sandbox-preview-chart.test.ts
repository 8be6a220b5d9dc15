// The sandbox with the real PreviewEnvironmentChart: a repository's main.ts run in the sandbox
// renders exactly what the same code renders in-process, and what it adds carries the
// environment's namespace and ownership.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exampleIdentity, renderExamplePreview } from '../../examples/example-preview.js';
import { ownershipLabels } from '../../constructs/index.js';
import { validatePreviewConfig } from '../../src/synth/preview-config-validation.js';
import { Sandbox } from '../../src/synth/sandbox.js';
import { SandboxError } from '../../src/synth/sandbox-error.js';
import type { PreviewSandboxInput } from '../../src/synth/sandbox-preview-chart.js';

const exampleRepository = fileURLToPath(new URL('../../examples/repository/', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'sandbox-chart-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function exampleInput(): PreviewSandboxInput {
  const validation = validatePreviewConfig(readFileSync(path.join(exampleRepository, '.preview/preview.yaml'), 'utf8'));
  assert.ok(validation.ok);
  return { config: validation.config, identity: exampleIdentity() };
}

function checkoutWith(main: string): string {
  const dir = mkdtempSync(path.join(scratch, 'checkout-'));
  cpSync(path.join(exampleRepository, '.preview'), path.join(dir, '.preview'), { recursive: true });
  mkdirSync(path.join(dir, '.preview'), { recursive: true });
  writeFileSync(path.join(dir, '.preview/main.ts'), main);
  return dir;
}

test("the example repository's main.ts renders in the sandbox exactly as in-process", async (t) => {
  const sandbox = new Sandbox();
  const result = await sandbox.run({ checkoutDir: exampleRepository, input: exampleInput() });
  assert.deepEqual(result.manifests, renderExamplePreview());
  assert.ok(
    result.manifests.some((m) => m.kind === 'ConfigMap' && m.metadata.name === 'ranking-fixtures'),
    'main.ts added its objects',
  );
  t.diagnostic(
    `example repository: bundle ${result.bundleMs.toFixed(0)} ms, run ${result.runMs.toFixed(0)} ms, ${result.manifests.length} objects`,
  );
});

test("objects main.ts adds land in the environment's namespace with its ownership labels, and see one construct library", async () => {
  const input = exampleInput();
  const result = await new Sandbox().run({
    checkoutDir: checkoutWith(`
      import { kplus, PreviewEnvironmentChart, type PreviewContext } from 'preview-operator/constructs';
      import { Chart } from 'cdk8s';
      export default function (chart: PreviewEnvironmentChart, context: PreviewContext): void {
        new kplus.k8s.KubeConfigMap(chart, 'facts', {
          metadata: { name: 'facts', labels: { 'preview.alien6.io/environment': 'someone-else' } },
          data: {
            sameChartClass: String(chart instanceof PreviewEnvironmentChart),
            sameCdk8s: String(chart instanceof Chart),
            pullRequest: String(context.identity.pullRequest),
            algorithms: (context.config.algorithms ?? []).map((a) => a.name).join(','),
          },
        });
      }
    `),
    input,
  });
  const facts = result.manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'facts');
  assert.ok(facts);
  assert.equal(facts.metadata.namespace, input.identity.namespace);
  assert.deepEqual(facts.metadata.labels, ownershipLabels(input.identity), 'ownership wins over what main.ts set');
  assert.deepEqual(facts.data, {
    sameChartClass: 'true',
    sameCdk8s: 'true',
    pullRequest: '42',
    algorithms: (input.config.algorithms ?? []).map((a) => a.name).join(','),
  });
});

test('objects put in a Chart of their own are refused, not silently dropped', async () => {
  await assert.rejects(
    new Sandbox().run({
      checkoutDir: checkoutWith(`
      import { cdk8s, kplus, type PreviewEnvironmentChart } from 'preview-operator/constructs';
      export default function (chart: PreviewEnvironmentChart): void {
        const elsewhere = new cdk8s.Chart(chart.node.root, 'elsewhere', { namespace: 'kube-system' });
        new kplus.k8s.KubeConfigMap(elsewhere, 'x', { data: {} });
      }
    `),
      input: exampleInput(),
    }),
    (err: unknown) =>
      err instanceof SandboxError &&
      err.reason === 'exception' &&
      /must add its constructs to the chart it receives; it created another Chart/.test(err.message),
  );
});
