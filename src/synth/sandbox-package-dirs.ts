// The node_modules directories the sandboxed process needs to read: the packages its bundle
// imports (cdk8s, cdk8s-plus-33, constructs) and, transitively, everything those depend on.
// Nothing else of the operator's installation becomes readable.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

interface PackageJson {
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

function readPackageJson(dir: string): PackageJson | undefined {
  const file = path.join(dir, 'package.json');
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
}

/** The root of the package containing `file`: the nearest directory up whose package.json has a name. */
function packageRootOf(file: string): string | undefined {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (readPackageJson(dir)?.name) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** Where Node would find package `name` when required from inside `fromDir`. */
function installedDependency(fromDir: string, name: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The real paths of the packages containing `files` and of all their installed dependencies
 * (dependencies, optional and peer dependencies), sorted.
 */
export function packageDirectories(files: Iterable<string>): string[] {
  const seen = new Set<string>();
  const queue: string[] = [];
  for (const file of files) {
    const root = packageRootOf(file);
    if (!root) throw new Error(`${file} is not inside a package`);
    queue.push(root);
  }
  while (queue.length > 0) {
    const dir = realpathSync(queue.pop()!);
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = readPackageJson(dir) ?? {};
    const names = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...Object.keys(pkg.peerDependencies ?? {}),
    ]);
    for (const name of names) {
      const found = installedDependency(dir, name);
      if (found) queue.push(found); // an optional dependency that is not installed is not needed
    }
  }
  return [...seen].sort();
}
