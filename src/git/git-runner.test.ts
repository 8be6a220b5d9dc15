import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { GitRunner } from './git-runner.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'git-runner-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs `use` with a GitRunner whose `git` is a stand-in shell script (first on PATH; this file
 * runs in a process of its own).
 */
async function withStandInGit<T>(name: string, script: string, use: (runner: GitRunner) => Promise<T>): Promise<T> {
  const bin = path.join(scratch, name);
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\n${script}`);
  chmodSync(path.join(bin, 'git'), 0o755);
  const savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath ?? ''}`;
  try {
    return await use(
      new GitRunner({ maxConcurrentProcesses: 1, timeoutMs: 10_000, homeDir: path.join(scratch, 'home'), passEnvironment: [] }),
    );
  } finally {
    process.env.PATH = savedPath;
  }
}

test('an answer is the whole output, even when the last of it arrives well after git exits', async () => {
  // It exits at once while the rest of its output is still on its way, as a busy event loop sees a real git.
  await withStandInGit('late-output', 'echo first\n(sleep 0.5; echo last) &\nexit 0\n', async (runner) => {
    assert.equal(await runner.run(scratch, ['ls-tree', 'HEAD']), 'first\nlast\n');
    assert.deepEqual(Object.fromEntries(runner.started), { 'ls-tree': 1 });
  });
});

test('a git whose helper keeps its output open (as after a kill for silence) still ends, after the grace period', async () => {
  await withStandInGit('held-output', 'echo first\n(sleep 8; echo never) &\nexit 0\n', async (runner) => {
    const started = performance.now();
    assert.equal(await runner.run(scratch, ['ls-tree', 'HEAD']), 'first\n');
    const seconds = (performance.now() - started) / 1000;
    // The grace is 2 s; the helper would have held the output for 8.
    assert.ok(seconds >= 1.9 && seconds < 7.5, `ended after ${seconds.toFixed(1)} s`);
  });
});

test("a token reaches git in its environment, scoped to the remote's origin, never on its command line", async () => {
  const token = 'ghs_0123456789abcdefSECRET';
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  const script = 'printf "argv:%s\\n" "$*"\nenv | grep -E "^GIT_CONFIG_(COUNT|KEY|VALUE)" | sort\n';
  await withStandInGit('credentials', script, async (runner) => {
    const out = await runner.run(scratch, ['fetch', '--', 'https://github.com/o/r.git', 'main'], {
      remote: new URL('https://github.com/o/r.git'),
      token,
    });
    const argv = out.split('\n').find((line) => line.startsWith('argv:'))!;
    assert.equal(argv, 'argv:fetch -- https://github.com/o/r.git main');
    assert.ok(!argv.includes(token) && !argv.includes(basic));
    assert.deepEqual(
      out.split('\n').filter((line) => /^GIT_CONFIG_(COUNT|KEY|VALUE)/.test(line)),
      ['GIT_CONFIG_COUNT=1', 'GIT_CONFIG_KEY_0=http.https://github.com/.extraheader', `GIT_CONFIG_VALUE_0=AUTHORIZATION: basic ${basic}`],
    );
    // Without a token, no credentials at all.
    assert.doesNotMatch(await runner.run(scratch, ['ls-remote']), /GIT_CONFIG_(COUNT|KEY|VALUE)/);
  });
});

test("with a token, simple-git's unsafe-option checks stay on", async () => {
  await withStandInGit('unsafe', 'echo ran\n', async (runner) => {
    const token = { remote: new URL('https://github.com/o/r.git'), token: 'ghs_x' };
    await assert.rejects(runner.run(scratch, ['fetch'], { ...token, config: ['core.sshCommand=touch /tmp/pwned'] }), /not permitted/);
    await assert.rejects(runner.run(scratch, ['fetch', '--upload-pack=touch /tmp/pwned', 'origin'], token), /not permitted/);
  });
});
