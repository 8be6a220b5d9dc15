// The operator loads two heavy packages only when it needs them: @kubernetes/client-node for the
// laptop cases of a kubeconfig (~75 MB of resident memory: its KubeConfig pulls in the whole
// generated API) and undici for GitHub's requests through a proxy (~4 MB). Only each one's
// loader may import it, with a dynamic import() when that case arises; anything else under src/
// only for types (erased). Tests and the dev harness (test/dev/, `npm run dev`) may use them freely.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const clientNode = '@kubernetes/client-node';
/** Each heavy package and the one file that may load it. */
const lazyPackages = [
  { name: clientNode, loader: path.join(src, 'kube', 'kube-config-client-node.ts') },
  { name: 'undici', loader: path.join(src, 'github', 'github-fetch.ts') },
];

/** Static imports and re-exports (type-only ones too), side-effect imports, and dynamic imports of a literal. */
const importPattern = /(?:\bimport|\bexport)\s+(type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Import {
  specifier: string;
  /** `type`: erased at build; `dynamic`: loaded when the code runs; `static`: loaded with the file. */
  kind: 'static' | 'type' | 'dynamic';
}

function importsOf(text: string): Import[] {
  // Comments may quote import statements; strip them first.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(importPattern)].map((m) =>
    m[3] ? { specifier: m[3], kind: 'dynamic' } : { specifier: m[2]!, kind: m[1] ? 'type' : 'static' },
  );
}

const isPackage = (name: string) => (i: Import) => i.specifier === name || i.specifier.startsWith(`${name}/`);

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

describe('the import forms', () => {
  it('tells the forms of import apart (the check can fail)', () => {
    const sample = [
      `import { KubeConfig } from '${clientNode}';`,
      `import type { V1Pod } from "${clientNode}";`,
      `export * from '${clientNode}';`,
      `import '${clientNode}';`,
      `const k = await import('${clientNode}');`,
      `// import x from 'commented-out';`,
    ].join('\n');
    assert.deepEqual(
      importsOf(sample).map((i) => `${i.kind} ${i.specifier}`),
      [`static ${clientNode}`, `type ${clientNode}`, `static ${clientNode}`, `static ${clientNode}`, `dynamic ${clientNode}`],
    );
  });
});

describe('main.ts', () => {
  it('loads the operator only after the source maps are on: one static import, own-source-maps.js; the CLI dynamically', () => {
    // A static import would load its modules before the maps are on (own-source-maps.ts).
    const imports = importsOf(readFileSync(path.join(src, 'main.ts'), 'utf8')).map((i) => `${i.kind} ${i.specifier}`);
    assert.deepEqual(imports, ['static ./own-source-maps.js', 'dynamic ./cli.js']);
  });
});

for (const { name, loader } of lazyPackages) {
  const isLazy = isPackage(name);
  describe(`${name} only lazily, only where it is needed`, () => {
    it('no file under src/ (tests aside) loads it, but its loader, with a dynamic import()', () => {
      const loads = sourceFiles(src).flatMap((file) =>
        importsOf(readFileSync(file, 'utf8'))
          .filter((i) => isLazy(i) && i.kind !== 'type')
          .map((i) => `${path.relative(root, file)}: ${i.kind}`),
      );
      assert.deepEqual(loads, [`${path.relative(root, loader)}: dynamic`]);
    });

    it('`preview-operator run` reaches no static import of it', () => {
      const seen = new Set<string>();
      const offenders: string[] = [];
      const visit = (file: string, via: string[]) => {
        if (seen.has(file)) return;
        seen.add(file);
        for (const i of importsOf(readFileSync(file, 'utf8'))) {
          if (isLazy(i) && i.kind === 'static') offenders.push([...via, file].map((f) => path.relative(root, f)).join(' → '));
          if (!i.specifier.startsWith('.')) continue;
          const target = resolveRelative(file, i.specifier);
          if (target) visit(target, [...via, file]);
        }
      };
      visit(path.join(src, 'main.ts'), []);
      assert.ok(seen.has(path.join(src, 'cli-run.ts')), 'the walk reaches the run command');
      assert.ok(seen.has(loader), 'the walk reaches its loader');
      assert.deepEqual(offenders, []);
    });
  });
}
