// Type-checks a repository's `.preview/main.ts` against the construct library, for `synth`:
// a misspelt field (`context.identity.shaa`) is an error with its `file:line:col` instead of a
// rendering with the field missing. The sandbox strips types and never needs this.
//
// The commit's files are read from git, not from a working tree, and shown to the compiler at a
// path inside the operator's own directory that never exists on disk: `preview-operator/constructs`
// then resolves through the package's own `exports` to `constructs/index.ts`, and cdk8s,
// cdk8s-plus-33 and constructs to the operator's node_modules, exactly what the sandbox bundles.
// The compiler is a dev dependency: without it (the image) nothing is checked, and the caller says so.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type ts from 'typescript';
import type { CommitFiles } from '../git/commit-files.js';

export type TypeCheckResult =
  | { checked: true; errors: string[] }
  /** Nothing was checked (no compiler, or the time ran out): why, for a note. */
  | { checked: false; reason: string };

export interface TypeCheckOptions {
  /** Inside the commit, e.g. `.preview/main.ts`. */
  entry: string;
  /** The checker gives up after this (parsing is bounded by the size of the sources). */
  timeoutMs: number;
}

const operatorRoot = fileURLToPath(new URL(import.meta.url.includes('/dist/') ? '../../../' : '../../', import.meta.url));
/** Where the commit appears to the compiler: under the operator's root, so its node_modules and name resolve. */
const checkoutRoot = path.join(operatorRoot, '.preview-type-check');

/** What the compiler checks main.ts with: the repository's own tsconfig.json does not travel with it. */
function compilerOptions(typescript: typeof ts): ts.CompilerOptions {
  return {
    target: typescript.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: typescript.ModuleKind.NodeNext,
    moduleResolution: typescript.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    esModuleInterop: true,
    types: ['node'],
    typeRoots: [path.join(operatorRoot, 'node_modules', '@types')],
  };
}

/** A compiler host that sees the commit at `checkoutRoot` and the real file system everywhere else. */
function commitHost(typescript: typeof ts, options: ts.CompilerOptions, files: CommitFiles): ts.CompilerHost {
  const host = typescript.createCompilerHost(options, true);
  const inCommit = (file: string): string | undefined => {
    const relative = path.relative(checkoutRoot, path.resolve(file));
    return relative.startsWith('..') || path.isAbsolute(relative) ? undefined : relative.split(path.sep).join('/');
  };
  const { fileExists, readFile, directoryExists, getSourceFile } = host;
  host.fileExists = (file) => {
    const relative = inCommit(file);
    return relative === undefined ? fileExists.call(host, file) : files.has(relative);
  };
  host.readFile = (file) => {
    const relative = inCommit(file);
    return relative === undefined ? readFile.call(host, file) : files.read(relative);
  };
  host.directoryExists = (dir) => {
    const relative = inCommit(dir);
    if (relative === undefined) return directoryExists?.call(host, dir) ?? true;
    return relative === '' || files.hasDirectory(relative);
  };
  host.getSourceFile = (file, language, onError, create) => {
    if (inCommit(file) === undefined) return getSourceFile.call(host, file, language, onError, create);
    const text = host.readFile(file);
    return text === undefined ? undefined : typescript.createSourceFile(file, text, language, true);
  };
  host.realpath = (file) => file;
  return host;
}

/** `.preview/main.ts:12:34 - error TS2551: Property 'shaa' does not exist …` */
function formatDiagnostic(typescript: typeof ts, diagnostic: ts.Diagnostic): string {
  const message = typescript.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
  const code = `error TS${diagnostic.code}`;
  if (!diagnostic.file || diagnostic.start === undefined) return `${code}: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const file = path.relative(checkoutRoot, diagnostic.file.fileName).split(path.sep).join('/');
  return `${file}:${line + 1}:${character + 1} - ${code}: ${message}`;
}

async function loadCompiler(): Promise<typeof ts | undefined> {
  try {
    return (await import('typescript')).default;
  } catch {
    return undefined;
  }
}

/** Every error in the commit's own files that the entry reaches (the libraries' are theirs to fix). */
export async function typeCheckPreview(files: CommitFiles, options: TypeCheckOptions): Promise<TypeCheckResult> {
  const typescript = await loadCompiler();
  if (!typescript) return { checked: false, reason: 'the TypeScript compiler is not installed (npm ci installs it)' };
  const compiler = compilerOptions(typescript);
  const entry = path.join(checkoutRoot, options.entry);
  const program = typescript.createProgram({ rootNames: [entry], options: compiler, host: commitHost(typescript, compiler, files) });
  const deadline = Date.now() + options.timeoutMs;
  const cancellation: ts.CancellationToken = {
    isCancellationRequested: () => Date.now() > deadline,
    throwIfCancellationRequested: () => {
      if (Date.now() > deadline) throw new typescript.OperationCanceledException();
    },
  };
  const own = program.getSourceFiles().filter((file) => !path.relative(checkoutRoot, file.fileName).startsWith('..'));
  const errors: string[] = [];
  try {
    for (const diagnostic of program.getOptionsDiagnostics(cancellation)) errors.push(formatDiagnostic(typescript, diagnostic));
    for (const file of own) {
      const diagnostics = [...program.getSyntacticDiagnostics(file, cancellation), ...program.getSemanticDiagnostics(file, cancellation)];
      for (const diagnostic of diagnostics) {
        if (diagnostic.category === typescript.DiagnosticCategory.Error) errors.push(formatDiagnostic(typescript, diagnostic));
      }
    }
  } catch (err) {
    if (!(err instanceof typescript.OperationCanceledException)) throw err;
    return { checked: false, reason: `the type check took longer than ${options.timeoutMs} ms` };
  }
  return { checked: true, errors };
}
