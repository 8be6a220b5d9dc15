// Starting and stopping private clusters: nothing may outlive them.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from '../cluster/start-cluster.js';
import { waitFor } from '../support/wait.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('stop() leaves no process of the cluster running and removes its data', async () => {
  const cluster = await startCluster({ log: () => {} });
  const pids = Object.values(cluster.pids());
  assert.deepEqual(Object.keys(cluster.pids()).sort(), ['apiserver', 'controller-manager', 'etcd', 'node-sim', 'scheduler']);
  await cluster.stop();
  assert.deepEqual(pids.filter(alive), []);
  assert.equal(existsSync(cluster.dataDir), false);
  await cluster.stop(); // twice is harmless
});

it('components exit when the process that started them is killed', async () => {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'start-and-wait.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const pids = await waitFor(
    'cluster started by child',
    () => {
      const line = out.split('\n').find((l) => l.startsWith('PIDS '));
      return line ? (JSON.parse(line.slice(5)) as Record<string, number>) : undefined;
    },
    { timeoutMs: 180_000 },
  );
  assert.equal(Object.keys(pids).length, 5);
  child.kill('SIGKILL');
  await waitFor('every component gone', () => Object.values(pids).every((pid) => !alive(pid)), { timeoutMs: 30_000 });
});
