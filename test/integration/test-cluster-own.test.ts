// A test file run on its own (not through `npm test`, which shares one cluster) starts a
// private cluster: it must serve every test and hook of the file, and be gone with the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sharedClusterEnv } from '../support/test-cluster.js';

const fixture = fileURLToPath(new URL('./fixtures/own-cluster-file.ts', import.meta.url));

/** Command lines of the running processes that mention `text`. */
function processesMentioning(text: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(text)) out.push(`${pid}: ${cmdline}`);
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

test(
  'a test file run on its own keeps its private cluster through its after hooks, and takes it away when it ends',
  { timeout: 240_000 },
  async () => {
    const env = { ...process.env };
    delete env[sharedClusterEnv];
    delete env.NODE_TEST_CONTEXT; // run as a file of its own, not as a subtest of this runner
    // Killed if it outlives the test, so a hang cannot keep this file (and its cluster) alive.
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', fixture], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: AbortSignal.timeout(230_000),
    });
    child.on('error', () => {}); // the abort; the exit code below reports it
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 0, output);
    assert.match(output, /^# pass 2$/m, output);
    const dataDir = /own-cluster-data-dir=(\S+)/.exec(output)?.[1];
    assert.ok(dataDir, output);
    assert.equal(existsSync(dataDir), false, `the cluster's data folder ${dataDir} is removed`);
    // SIGKILLed as the file's process exited: give the kernel a moment to reap them.
    const deadline = Date.now() + 5000;
    while (processesMentioning(dataDir).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(processesMentioning(dataDir), [], 'no component of the private cluster is left running');
  },
);
