// A repository's `.preview/main.ts` type-checks against `preview-operator/constructs`, resolved
// the way it is outside this project: through the package's `exports`, from a node_modules
// entry, under a repository's own strict tsconfig. And a wrong call is caught. The examples in
// docs/repository-config.md are the tested ones.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { formatPreviewConfigErrors, validatePreviewConfig } from '../../src/synth/preview-config-validation.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

async function typeCheck(repository: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [tsc, '--noEmit', '-p', repository], { timeout: 180_000 });
    return { ok: true, output: stdout };
  } catch (err) {
    const failure = err as { stdout?: string; stderr?: string; code?: number };
    if (typeof failure.code !== 'number') throw err;
    return { ok: false, output: `${failure.stdout ?? ''}${failure.stderr ?? ''}` };
  }
}

describe('preview-operator/constructs as a package', () => {
  const repository = mkdtempSync(path.join(os.tmpdir(), 'preview-repo-'));
  after(() => rmSync(repository, { recursive: true, force: true }));

  mkdirSync(path.join(repository, '.preview'));
  mkdirSync(path.join(repository, 'node_modules'));
  symlinkSync(root, path.join(repository, 'node_modules', 'preview-operator'), 'dir');
  copyFileSync(path.join(root, 'examples/repository/.preview/main.ts'), path.join(repository, '.preview', 'main.ts'));
  writeFileSync(
    path.join(repository, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      include: ['.preview/**/*.ts'],
    }),
  );

  it('type-checks the documented example main.ts', async () => {
    const result = await typeCheck(repository);
    assert.ok(result.ok, result.output);
  });

  it('rejects a main.ts that breaks the contract', async () => {
    writeFileSync(
      path.join(repository, '.preview', 'broken.ts'),
      [
        "import type { PreviewMain } from 'preview-operator/constructs';",
        'const main: PreviewMain = (chart, context) => {',
        '  chart.addRoute(42, context.identity.host);',
        '};',
        'export default main;',
        '',
      ].join('\n'),
    );
    const result = await typeCheck(repository);
    assert.equal(result.ok, false);
    assert.match(result.output, /broken\.ts\(3,18\): error TS2345: Argument of type .number. is not assignable/);
  });
});

describe('docs/repository-config.md', () => {
  const doc = readFileSync(path.join(root, 'docs/repository-config.md'), 'utf8');
  const blocks = [...doc.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], text: m[2]! }));

  it('shows the example main.ts that is type-checked above', () => {
    const documented = blocks.find((b) => b.lang === 'ts' && b.text.startsWith('// .preview/main.ts'));
    assert.ok(documented, 'no main.ts example in the doc');
    const fromImports = (text: string) => text.slice(text.indexOf('import '));
    assert.equal(fromImports(documented.text), fromImports(readFileSync(path.join(root, 'examples/repository/.preview/main.ts'), 'utf8')));
  });

  it('shows a preview.yaml that validates', () => {
    const documented = blocks.find((b) => b.lang === 'yaml' && b.text.startsWith('version: 1'));
    assert.ok(documented, 'no preview.yaml example in the doc');
    const result = validatePreviewConfig(documented.text);
    assert.ok(result.ok, result.ok ? '' : formatPreviewConfigErrors(result.errors));
    assert.equal(result.config.algorithms?.length, 2);
  });
});
