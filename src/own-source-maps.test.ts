import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ownSourceMaps = fileURLToPath(new URL('./own-source-maps.ts', import.meta.url));

/** A compiled module that throws from line 1 of its JavaScript, mapped to line 7 of `source`. */
function compiled(source: string): string {
  const map = { version: 3, sources: [source], names: [], mappings: 'AAMA' };
  return `export const fail = () => { throw new Error('boom'); };\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
}

test("stack traces name the operator's own sources, and node_modules' source maps are never read", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'own-source-maps-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'dist'));
  await mkdir(path.join(dir, 'node_modules', 'heavy'), { recursive: true });
  await writeFile(path.join(dir, 'dist', 'own.js'), compiled('own.ts'));
  await writeFile(path.join(dir, 'node_modules', 'heavy', 'index.js'), compiled('heavy.ts'));
  // As main.ts: the module first, the rest through dynamic imports. Node strips the types of the .ts itself.
  const entry = `import ${JSON.stringify(ownSourceMaps)};
    import { findSourceMap } from 'node:module';
    const stackOf = async (file) => { try { (await import(file)).fail(); } catch (err) { return err.stack.split('\\n')[1]; } };
    const own = ${JSON.stringify(path.join(dir, 'dist', 'own.js'))}, heavy = ${JSON.stringify(path.join(dir, 'node_modules', 'heavy', 'index.js'))};
    console.log(JSON.stringify({ own: await stackOf(own), heavy: await stackOf(heavy), ownMap: !!findSourceMap(own), heavyMap: !!findSourceMap(heavy) }));`;
  await writeFile(path.join(dir, 'entry.mjs'), entry);
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(dir, 'entry.mjs')]);
  const seen = JSON.parse(stdout) as { own: string; heavy: string; ownMap: boolean; heavyMap: boolean };
  assert.match(seen.own, /own\.ts:7:/, "the operator's frame names its TypeScript line");
  assert.equal(seen.ownMap, true);
  assert.match(seen.heavy, /heavy[/\\]index\.js:1:/, "a dependency's frame stays as compiled");
  assert.equal(seen.heavyMap, false, "a dependency's source map is not held");
});
