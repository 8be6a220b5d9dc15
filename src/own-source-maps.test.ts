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

test("a dependency's inline source map is not kept in memory: its comment is cut as the module loads", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'own-source-maps-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(path.join(dir, 'node_modules', 'heavy'), { recursive: true });
  // 8 MB of map, as cdk8s-plus's 2.7 MB: V8 would hold the source with it and a copy of its URL.
  const map = { version: 3, sources: ['heavy.ts'], names: [], mappings: 'AAAA', sourcesContent: ['x'.repeat(6_000_000)] };
  const heavy = `exports.size = 1;\n//# sourceMappingURL=data:application/json;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;
  await writeFile(path.join(dir, 'node_modules', 'heavy', 'index.js'), heavy);
  const entry = `import ${JSON.stringify(ownSourceMaps)};
    import { createRequire } from 'node:module';
    // After the tasks the load left (a string may be held until they run), and full collections.
    const heapAfterGc = async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      globalThis.gc(), globalThis.gc();
      return process.memoryUsage().heapUsed;
    };
    const before = await heapAfterGc();
    createRequire(import.meta.url)('heavy');
    console.log(JSON.stringify({ grownMb: ((await heapAfterGc()) - before) / 1e6 }));`;
  await writeFile(path.join(dir, 'entry.mjs'), entry);
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', path.join(dir, 'entry.mjs')]);
  const { grownMb } = JSON.parse(stdout) as { grownMb: number };
  // Kept, the comment alone would be 16 MB (source and URL); cut, the module is a line.
  assert.ok(grownMb < 2, `the heap grew ${grownMb.toFixed(1)} MB loading a module with an 8 MB inline map`);
});

test('withoutInlineSourceMap cuts a trailing inline map and nothing else, from text or bytes', async () => {
  const { withoutInlineSourceMap } = await import('./own-source-maps.js');
  const mapped = 'a();\n//# sourceMappingURL=data:application/json;base64,eyJ9\n';
  assert.equal(withoutInlineSourceMap(mapped)?.toString(), 'a();\n');
  assert.equal(withoutInlineSourceMap(Buffer.from(mapped))?.toString(), 'a();\n');
  assert.equal(withoutInlineSourceMap('a();\n//# sourceMappingURL=a.js.map\n'), undefined);
  assert.equal(withoutInlineSourceMap('const s = "//# sourceMappingURL=data:";\n'), undefined);
  // The marker at the start of a line inside a template literal, code after it: not the last line.
  const literal = 'const banner = `\n//# sourceMappingURL=data:${url}\n`;\nexport default banner;\n';
  assert.equal(withoutInlineSourceMap(literal), undefined);
  assert.equal(withoutInlineSourceMap(Buffer.from(literal)), undefined);
});
