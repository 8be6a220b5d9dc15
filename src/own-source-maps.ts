// Stack traces that name the operator's TypeScript lines: the source maps of its own files only.
// `--enable-source-maps` also reads node_modules' inline maps, and keeps them in the heap for good
// (3.5 MB, cdk8s-plus's alone 2.7 MB). A module's map is read as the module loads, so whatever
// imports this first must load the operator after it, with a dynamic import (main.ts).
//
// Unread, a dependency's inline map still costs memory: V8 keeps each script's source, the map's
// comment included, and a copy of the comment's URL besides. So the comment is cut from the files
// under node_modules as they load (loading cdk8s-plus: 7 MB less heap, 6 MB less RSS); an
// external map's comment (`x.js.map`) is a few bytes and stays.
import { registerHooks, setSourceMapsSupport, type LoadHookContext, type LoadFnOutput } from 'node:module';

setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
registerHooks({ load: withoutDependencyInlineMaps });

const inlineMap = '\n//# sourceMappingURL=data:';
/** Tab, line feed, carriage return, space. */
const isWhiteSpace = (code: number) => code === 9 || code === 10 || code === 13 || code === 32;

/**
 * Whether what follows `from` is one word (the data URL) then white space only: the marker's line
 * is the last. A loop, not a regular expression: V8 keeps a regular expression's last input alive.
 */
function lastLineFrom(source: string | Buffer, from: number): boolean {
  const codeAt = typeof source === 'string' ? (i: number) => source.charCodeAt(i) : (i: number) => source[i]!;
  let i = from;
  while (i < source.length && !isWhiteSpace(codeAt(i))) i++;
  while (i < source.length && isWhiteSpace(codeAt(i))) i++;
  return i === source.length;
}

/** The formats that are JavaScript text (none named: a CommonJS file required by another). */
const scriptFormats = new Set<string | null | undefined>([undefined, null, 'commonjs', 'module']);

/**
 * A copy of `source` without its inline source map comment, when that comment is its last line,
 * or undefined. A copy: a slice would keep the whole source alive. The same text anywhere else
 * (a string in the code) is the code's, and stays.
 */
export function withoutInlineSourceMap(source: string | Buffer): Buffer | undefined {
  const at = source.lastIndexOf(inlineMap);
  if (at < 0) return undefined;
  if (!lastLineFrom(source, at + inlineMap.length)) return undefined;
  return typeof source === 'string' ? Buffer.from(source.slice(0, at + 1), 'utf8') : Buffer.from(source.subarray(0, at + 1));
}

type NextLoad = (url: string, context?: Partial<LoadHookContext>) => LoadFnOutput;

/** The module loader's hook: a script under node_modules loads without its inline map. */
function withoutDependencyInlineMaps(url: string, context: LoadHookContext, nextLoad: NextLoad): LoadFnOutput {
  const loaded = nextLoad(url, context);
  const { source } = loaded;
  if (!url.includes('/node_modules/') || !scriptFormats.has(loaded.format) || source === undefined || source === null) return loaded;
  // A view on the loader's bytes (no copy), whatever typed array it gave.
  const text =
    typeof source === 'string'
      ? source
      : source instanceof ArrayBuffer
        ? Buffer.from(source)
        : Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  const cut = withoutInlineSourceMap(text);
  return cut ? { ...loaded, source: cut } : loaded;
}
