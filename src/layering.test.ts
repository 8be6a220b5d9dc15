// The product (src/, constructs/) imports nothing under test/: the image is built from those two
// folders alone, and a harness the product could reach would either ship or break the build. Tests
// (*.test.ts, never built) may use the fixtures and the emulator; the dev harness lives in test/dev/.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const testDir = path.join(root, 'test');

/** A quoted literal: '…', "…" or a template without `${`. */
const literal = String.raw`(?:'([^'\n]+)'|"([^"\n]+)"|\x60([^\x60$]+)\x60)`;
const forms = [
  // import … from, export … from (type-only too), side-effect imports
  String.raw`(?:\bimport|\bexport)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?${literal}`,
  // import('…') and import(`…`)
  String.raw`\bimport\(\s*${literal}\s*[,)]`,
  // new URL('…', import.meta.url): a file reached by URL, imported or read
  String.raw`\bnew\s+URL\(\s*${literal}\s*,\s*import\.meta\.url\s*\)`,
];
const specifierPattern = new RegExp(forms.join('|'), 'g');

/** Every module or file specifier a source text names as a literal (comments aside). */
function specifiersOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(specifierPattern)].map((m) => m.slice(1).find((group) => group !== undefined)!);
}

/** Whether `specifier`, written in `file`, names something under test/. */
function reachesTest(file: string, specifier: string): boolean {
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) return false; // a package or node: builtin
  const target = path.resolve(path.dirname(file), specifier);
  return target === testDir || target.startsWith(`${testDir}${path.sep}`);
}

function productFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return entry === 'node_modules' ? [] : productFiles(full);
    return entry.endsWith('.ts') && !entry.endsWith('.test.ts') ? [full] : [];
  });
}

describe('the product imports nothing under test/', () => {
  it('finds specifiers of every form (the check can fail)', () => {
    const sample = [
      `import { a } from '../test/a.js';`,
      `import type { B } from "../../test/b.js";`,
      `export * from '../test/c.js';`,
      `import '../test/d.js';`,
      'const e = await import(`../test/e.js`);',
      `const f = await import('../test/f.js', { with: {} });`,
      `const g = new URL('../test/g.json', import.meta.url);`,
      `// import x from '../test/commented-out.js';`,
      `const url = 'https://example.test/x'; // import y from '../test/commented.js'`,
    ].join('\n');
    assert.deepEqual(specifiersOf(sample), [
      '../test/a.js',
      '../../test/b.js',
      '../test/c.js',
      '../test/d.js',
      '../test/e.js',
      '../test/f.js',
      '../test/g.json',
    ]);
  });

  it('resolves specifiers against the importing file', () => {
    const file = path.join(root, 'src', 'github', 'x.ts');
    assert.equal(reachesTest(file, '../../test/github-emulator/emulator.js'), true);
    assert.equal(reachesTest(file, '../test/emulator.js'), false, 'src/test/ is not test/');
    assert.equal(reachesTest(file, '../../testing/x.js'), false);
    assert.equal(reachesTest(file, 'node:test'), false);
    assert.equal(reachesTest(path.join(root, 'constructs', 'x.ts'), '../test'), true);
  });

  it('no file under src/ or constructs/ (tests aside) names a file under test/', () => {
    const offenders = ['src', 'constructs']
      .flatMap((dir) => productFiles(path.join(root, dir)))
      .flatMap((file) =>
        specifiersOf(readFileSync(file, 'utf8'))
          .filter((s) => reachesTest(file, s))
          .map((s) => `${path.relative(root, file)} → ${s}`),
      );
    assert.deepEqual(offenders, []);
  });
});
