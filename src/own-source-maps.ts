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

/**
 * A copy of `source` without its trailing inline source map comment (the line and what follows),
 * or undefined when it has none. A copy: a slice would keep the whole source alive.
 */
export function withoutInlineSourceMap(source: string | Buffer): Buffer | undefined {
  const at = source.lastIndexOf(inlineMap);
  if (at < 0) return undefined;
  return typeof source === 'string' ? Buffer.from(source.slice(0, at + 1), 'utf8') : Buffer.from(source.subarray(0, at + 1));
}

type NextLoad = (url: string, context?: Partial<LoadHookContext>) => LoadFnOutput;

/** The module loader's hook: a file under node_modules loads without its inline map. */
function withoutDependencyInlineMaps(url: string, context: LoadHookContext, nextLoad: NextLoad): LoadFnOutput {
  const loaded = nextLoad(url, context);
  const { source } = loaded;
  if (!url.includes('/node_modules/') || source === undefined || source === null) return loaded;
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
