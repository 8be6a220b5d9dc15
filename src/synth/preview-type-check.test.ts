// The type check of `.preview/main.ts` that `synth` runs first: errors with their position in the
// commit's file, the construct library's types resolved as a repository sees them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { CommitFiles } from '../git/commit-files.js';
import { typeCheckPreview } from './preview-type-check.js';

const exampleMain = readFileSync(new URL('../../examples/repository/.preview/main.ts', import.meta.url), 'utf8');

function memoryCommit(files: Record<string, string>): CommitFiles {
  const directories = new Set(
    Object.keys(files).flatMap((f) =>
      f
        .split('/')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
    ),
  );
  return { has: (f) => f in files, hasDirectory: (d) => directories.has(d), read: (f) => files[f] };
}

describe('typeCheckPreview', () => {
  it('passes the example main.ts', async () => {
    const started = Date.now();
    const result = await typeCheckPreview(memoryCommit({ '.preview/main.ts': exampleMain }), {
      entry: '.preview/main.ts',
      timeoutMs: 60_000,
    });
    assert.deepEqual(result, { checked: true, errors: [] });
    console.log(`type check: ${Date.now() - started} ms`);
  });

  it('reports a misspelt field with file:line:col, also in a local import', async () => {
    const main = exampleMain.replace('context.identity.sha,', 'context.identity.shaa,');
    const line = main.split('\n').findIndex((l) => l.includes('shaa')) + 1;
    const column = main.split('\n')[line - 1]!.indexOf('shaa') + 1;
    const files = {
      '.preview/main.ts': `${main}\nimport { port } from './lib/port.ts';\nexport const p: string = port;\n`,
      '.preview/lib/port.ts': 'export const port: number = 8080;\n',
    };
    const result = await typeCheckPreview(memoryCommit(files), { entry: '.preview/main.ts', timeoutMs: 60_000 });
    assert.equal(result.checked, true);
    assert.ok(result.checked);
    assert.equal(result.errors.length, 2, result.errors.join('\n'));
    assert.match(result.errors[0]!, new RegExp(`^\\.preview/main\\.ts:${line}:${column} - error TS2551: Property 'shaa' does not exist`));
    assert.match(result.errors[1]!, /^\.preview\/main\.ts:\d+:14 - error TS2322: Type 'number' is not assignable to type 'string'/);
  });

  it('gives up after its time limit instead of blocking synth', async () => {
    const result = await typeCheckPreview(memoryCommit({ '.preview/main.ts': exampleMain }), { entry: '.preview/main.ts', timeoutMs: 0 });
    assert.deepEqual(result, { checked: false, reason: 'the type check took longer than 0 ms' });
  });
});
