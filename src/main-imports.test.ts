// The operator must not load @kubernetes/client-node: importing it costs ~75 MB of resident
// memory (its KubeConfig pulls in the whole generated API), against a 250 MB budget. Tests and
// the dev harness (test/dev/, `npm run dev`) may use it; what ships may not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const forbidden = '@kubernetes/client-node';

/** Static imports and re-exports (type-only ones too), side-effect imports, and dynamic imports of a literal. */
const importPattern = /(?:\bimport|\bexport)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(text: string): string[] {
  // Comments may quote import statements; strip them first.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(importPattern)].map((m) => (m[1] ?? m[2])!);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return entry.endsWith('.ts') && !entry.endsWith('.test.ts') ? [full] : [];
  });
}

/** The file a relative specifier names (`./x.js` is written for `./x.ts`). */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

describe('no @kubernetes/client-node in what the operator runs', () => {
  it('finds imports of every form (the check can fail)', () => {
    const sample = `import { KubeConfig } from '${forbidden}';\nimport type { V1Pod } from "${forbidden}";\nexport * from '${forbidden}';\nimport '${forbidden}';\nconst k = await import('${forbidden}');\n// import x from 'commented-out';`;
    assert.deepEqual(importsOf(sample), [forbidden, forbidden, forbidden, forbidden, forbidden]);
  });

  it('no file under src/ (tests aside) imports it, not even for types', () => {
    const offenders = sourceFiles(src).filter((file) => importsOf(readFileSync(file, 'utf8')).includes(forbidden));
    assert.deepEqual(offenders.map((f) => path.relative(root, f)), []);
  });

  it('`preview-operator run` reaches no file that imports it', () => {
    const seen = new Set<string>();
    const offenders: string[] = [];
    const visit = (file: string, via: string[]) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
        if (specifier === forbidden || specifier.startsWith(`${forbidden}/`)) offenders.push([...via, file].map((f) => path.relative(root, f)).join(' → '));
        if (!specifier.startsWith('.')) continue;
        const target = resolveRelative(file, specifier);
        if (target) visit(target, [...via, file]);
      }
    };
    visit(path.join(src, 'main.ts'), []);
    assert.ok(seen.has(path.join(src, 'cli-run.ts')), 'the walk reaches the run command');
    assert.ok(seen.has(path.join(src, 'kube', 'kube-config.ts')), 'the walk reaches the kubeconfig loader');
    assert.deepEqual(offenders, []);
  });
});
