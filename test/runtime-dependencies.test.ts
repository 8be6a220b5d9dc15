// The image installs `dependencies` only (npm ci --omit=dev): each must be imported by the code it
// ships, src/ and constructs/ outside their tests. A package only tests, the bench or the tools use
// belongs in devDependencies.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

async function shippedSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return shippedSources(full);
      return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
    }),
  );
  return nested.flat();
}

test('every runtime dependency is imported by the code the image ships', async () => {
  const { dependencies } = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const files = [...(await shippedSources(path.join(root, 'src'))), ...(await shippedSources(path.join(root, 'constructs')))];
  const imported = new Set<string>();
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]((?:@[^/'"]+\/)?[^/'".][^/'"]*)/g))
      imported.add(m[1]!);
  }
  const unused = Object.keys(dependencies).filter((name) => !imported.has(name));
  assert.deepEqual(unused, [], 'runtime dependencies nothing under src/ or constructs/ imports: move them to devDependencies');
});
