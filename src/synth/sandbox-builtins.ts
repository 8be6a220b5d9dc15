// The Node built-in modules a repository's construct code may import. Node 20's permission model
// limits file reads, child processes, workers and the inspector, but not the network, module
// loading or diagnostics that write files; the modules giving those are left out here and refused
// both when the code is bundled and at run time (process.getBuiltinModule).
// child_process and worker_threads stay importable: the permission model itself denies their use,
// with an error that names what was denied.
const allowed = new Set([
  'assert',
  'assert/strict',
  'buffer',
  'child_process',
  'console',
  'crypto',
  'events',
  'fs',
  'fs/promises',
  'path',
  'path/posix',
  'path/win32',
  'perf_hooks',
  'process',
  'querystring',
  'stream',
  'stream/consumers',
  'stream/promises',
  'stream/web',
  'string_decoder',
  'timers',
  'timers/promises',
  'url',
  'util',
  'util/types',
  'worker_threads',
  'zlib',
]);

/** `node:x` or `x` → `x`. */
export function builtinName(specifier: string): string {
  return specifier.startsWith('node:') ? specifier.slice('node:'.length) : specifier;
}

export function isAllowedBuiltin(specifier: string): boolean {
  return allowed.has(builtinName(specifier));
}

export const allowedBuiltins: readonly string[] = [...allowed].sort();
