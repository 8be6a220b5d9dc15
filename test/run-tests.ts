// The test command: one local control plane for every test file, then node's test runner.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, type ClusterHandle } from './cluster/start-cluster.js';
import { sharedClusterEnv } from './support/test-cluster.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const skip = new Set(['node_modules', '.cache', 'dist', '.git']);

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (skip.has(entry)) continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...findTests(full));
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = ['constructs', 'src', 'test', 'bench']
  .flatMap((d) => findTests(path.join(root, d)))
  .map((f) => path.relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no test files match ${filters.join(' ')}\n`);
  process.exit(1);
}

// With cert-manager (and its test CA): it issues the certificates of every test's previews.
const cluster = await startCluster({ certManager: true });
const handle: ClusterHandle = {
  server: cluster.server,
  token: cluster.token,
  kubeconfigPath: cluster.kubeconfigPath,
  auditLogPath: cluster.auditLogPath,
  dataDir: cluster.dataDir,
};
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, [sharedClusterEnv]: JSON.stringify(handle) },
});
const forward = (signal: NodeJS.Signals) => child.kill(signal);
process.on('SIGINT', forward);
process.on('SIGTERM', forward);
const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await cluster.stop();
process.exit(code);
