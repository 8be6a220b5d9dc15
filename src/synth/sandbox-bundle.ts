// Compiles a repository's `.preview/main.ts` (and the local files it imports) together with the
// harness into one ES module, in the operator process, with esbuild. The sandboxed process then
// needs no TypeScript loader (tsx would want to write a cache, and its hooks a worker thread,
// both denied there) and reads nothing but that file, the checkout and the construct packages.
//
// The bundle step is also an import policy for the repository's code: it may import files inside
// the checkout, `preview-operator/constructs`, cdk8s, cdk8s-plus-33, constructs and the allowed
// Node built-ins; nothing else. The construct packages stay external (loaded from the operator's
// node_modules), so the chart and the repository's code share one copy of each.
import { realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, stop, type Loader, type Message, type Plugin } from 'esbuild';
import { allowedBuiltins, builtinName, isAllowedBuiltin } from './sandbox-builtins.js';
import { SandboxError } from './sandbox-error.js';

/** The packages a repository's code may import by name. */
export const importablePackages = ['preview-operator/constructs', 'cdk8s', 'cdk8s-plus-33', 'constructs'] as const;

export interface SandboxBundleRequest {
  /** Real path of the checkout (no symlinks in it). */
  checkoutDir: string;
  /** Path of the entry inside the checkout, e.g. `.preview/main.ts`. */
  entry: string;
  /** Absolute path of the module exporting `createSandboxChart` (a SandboxChartFactory). */
  chartFactory: string;
  /** Absolute path of the construct library's entry (what `preview-operator/constructs` means). */
  constructsEntry: string;
  /** Where the bundle will be written; source map paths are relative to it. */
  outfile: string;
}

export interface SandboxBundle {
  code: string;
  /** Absolute paths of the external packages' files the bundle imports. */
  externalFiles: string[];
}

const harnessModule = siblingModule('sandbox-harness');
const hardeningModule = siblingModule('sandbox-hardening');
const operatorRoot = path.resolve(path.dirname(harnessModule), '../..');
const policyNote = 'policy';
/** The repository's source the compiler reads in all: far above a preview's program, far below what strains it. */
const maxSourceBytes = 4 * 1024 * 1024;
/** What esbuild says when its service process died under it (e.g. its parser's stack overflowed). */
const serviceDied = /The service (was stopped|is no longer running)/;

/** A module next to this one, as .ts when running from sources, .js when compiled. */
function siblingModule(name: string): string {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`./${name}${ext}`, import.meta.url));
}

function inside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * How each kind of file the repository's code imports is compiled: every extension esbuild
 * would load by itself is here, so that none of the repository's files is read but through the
 * policy's onLoad (which refuses any other).
 */
const loaders: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
};

/**
 * A `sourceMappingURL` comment makes esbuild (writing a source map of its own) open the file it
 * names — any path, with the operator's rights, outside the checkout and outside every limit of
 * the run: another file's contents copied into the bundle, a device that blocks the read for
 * ever (`/dev/ptmx`) or never ends it (`/dev/zero`). The repository's files lose the link.
 */
export function withoutSourceMapLinks(source: string): string {
  return source.replace(/(\/\/|\/\*)([ \t]*[#@][ \t]*)sourceMappingURL([ \t]*=)/g, '$1$2sourceMappingURL-ignored$3');
}

function isBare(specifier: string): boolean {
  return !specifier.startsWith('.') && !specifier.startsWith('/') && !/^[a-z][a-z0-9+.-]*:/i.test(specifier);
}

function importPolicy(request: SandboxBundleRequest, externalFiles: Set<string>): Plugin {
  const skip = Symbol('resolved by the import policy');
  const deny = (text: string) => ({ errors: [{ text, detail: policyNote }] });
  return {
    name: 'preview-sandbox-imports',
    setup(bundler) {
      bundler.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || (args.pluginData as { [skip]?: true } | undefined)?.[skip]) return undefined;
        const fromRepository = inside(args.importer, request.checkoutDir);
        const specifier = args.path;
        const again = (spec: string, resolveDir: string) =>
          bundler.resolve(spec, { kind: args.kind, resolveDir, importer: args.importer, pluginData: { [skip]: true } });

        if (specifier.startsWith('node:') || (isBare(specifier) && isBuiltin(specifier))) {
          if (fromRepository && !isAllowedBuiltin(specifier)) {
            return deny(
              `node:${builtinName(specifier)} is not available in the preview sandbox (allowed built-ins: ${allowedBuiltins.join(', ')})`,
            );
          }
          return { path: specifier, external: true };
        }
        if (specifier === 'preview-operator/constructs') return { path: request.constructsEntry };
        if (isBare(specifier)) {
          if (fromRepository && !(importablePackages as readonly string[]).includes(specifier)) {
            return deny(
              `"${specifier}" is not available in the preview sandbox; ${request.entry} may import ${importablePackages.join(', ')}, files of the repository and Node built-ins`,
            );
          }
          const resolved = await again(specifier, fromRepository ? operatorRoot : args.resolveDir);
          if (resolved.errors.length > 0) return { errors: resolved.errors };
          externalFiles.add(resolved.path);
          return { path: pathToFileURL(resolved.path).href, external: true };
        }
        if (!fromRepository) return undefined;
        const resolved = await again(specifier, args.resolveDir);
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        if (!inside(realpathSync(resolved.path), request.checkoutDir)) {
          return deny(`"${specifier}" is outside the repository; ${request.entry} may import only files of the repository`);
        }
        return resolved;
      });
      let sourceBytes = 0;
      bundler.onLoad({ filter: /.*/ }, async (args) => {
        if (!inside(args.path, request.checkoutDir)) return undefined;
        sourceBytes += (await stat(args.path)).size;
        if (sourceBytes > maxSourceBytes) return deny(`the files ${request.entry} imports exceed ${maxSourceBytes} bytes`);
        const loader = Object.hasOwn(loaders, path.extname(args.path)) ? loaders[path.extname(args.path)] : undefined;
        if (!loader) return deny(`${path.relative(request.checkoutDir, args.path)} is not TypeScript, JavaScript or JSON`);
        return { contents: withoutSourceMapLinks(await readFile(args.path, 'utf8')), loader };
      });
    },
  };
}

function formatMessage(message: Message, checkoutDir: string): string {
  const where = message.location
    ? `${path.isAbsolute(message.location.file) ? path.relative(checkoutDir, message.location.file) : message.location.file}:${message.location.line}:${message.location.column}: `
    : '';
  return `${where}${message.text}`;
}

/**
 * Bundles the program. esbuild runs as one service process for the whole operator: input that
 * kills it (a parser stack overflow on deeply nested code) would fail every later bundle, so the
 * service is restarted and the bundle tried once more; failing again, the input is the cause.
 */
export async function bundleSandboxProgram(request: SandboxBundleRequest): Promise<SandboxBundle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await bundleOnce(request);
    } catch (err) {
      if (err instanceof SandboxError || !serviceDied.test((err as Error).message)) throw err;
      await stop();
      if (attempt === 2) {
        throw new SandboxError('compile', `${request.entry} could not be compiled: the compiler stopped on it (code nested too deeply?)`);
      }
    }
  }
}

async function bundleOnce(request: SandboxBundleRequest): Promise<SandboxBundle> {
  const externalFiles = new Set<string>();
  const userEntry = path.join(request.checkoutDir, request.entry);
  // The hardening module comes first so that it is evaluated before any repository code; the
  // repository's module is imported lazily so that errors in its top level are reported, not fatal.
  const contents = [
    `import ${JSON.stringify(hardeningModule)};`,
    `import { runHarness } from ${JSON.stringify(harnessModule)};`,
    `import { createSandboxChart } from ${JSON.stringify(request.chartFactory)};`,
    `await runHarness(createSandboxChart, () => import(${JSON.stringify(userEntry)}), ${JSON.stringify(request.checkoutDir)}, ${JSON.stringify(request.entry)});`,
  ].join('\n');
  try {
    const result = await build({
      // Anchored in the operator's tree: the entry is the operator's code, not the repository's.
      stdin: { contents, resolveDir: operatorRoot, sourcefile: 'preview-sandbox-entry.js', loader: 'js' },
      // Message locations are then relative to the checkout: `.preview/main.ts:3:5`.
      absWorkingDir: request.checkoutDir,
      bundle: true,
      write: false,
      outfile: request.outfile,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      sourcemap: 'inline',
      sourcesContent: false,
      // A computed import() becomes a call that throws: code cannot load what the policy did not see.
      supported: { 'dynamic-import': false },
      // The repository's tsconfig.json is not read: it could point esbuild at files outside the checkout.
      tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
      loader: loaders,
      logLevel: 'silent',
      plugins: [importPolicy(request, externalFiles)],
    });
    return { code: result.outputFiles[0]!.text, externalFiles: [...externalFiles] };
  } catch (err) {
    const errors = (err as { errors?: Message[] }).errors;
    if (!errors || errors.some((e) => serviceDied.test(e.text))) throw err;
    const denied = errors.some((e) => e.detail === policyNote);
    const text = errors
      .slice(0, 5)
      .map((e) => formatMessage(e, request.checkoutDir))
      .join('\n');
    throw new SandboxError(denied ? 'permission' : 'compile', `${request.entry} could not be compiled:\n${text}`);
  }
}
