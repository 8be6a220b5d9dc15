// `npm run dev` driven as a person drives it: `push` typed in its terminal redeploys the demo's
// environment and prints the redeploy; `npm run dev -- close` from a second terminal closes the pull
// request and dev prints the teardown. dev starts a cluster of its own here (no KUBECONFIG): its
// PreviewEnvironment controller must not reconcile the shared cluster's environments of other tests.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { environmentName } from '../../src/intake/pull-request-environment-name.js';
import { waitFor } from '../support/wait.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const workDir = await mkdtemp(path.join(os.tmpdir(), 'dev-actions-'));
after(() => rm(workDir, { recursive: true, force: true }));

/** The node arguments of package.json's `dev` script: the test runs what `npm run dev` runs. */
function devScript(): string[] {
  const { scripts } = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: { dev: string } };
  const [command, ...args] = scripts.dev.split(/\s+/);
  assert.equal(command, 'node');
  return args;
}

// Only what a fresh shell has, and where the two terminals meet.
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  PREVIEW_DEV_SOCKET: path.join(workDir, 'dev.sock'),
};

test(
  'dev actions: push redeploys and prints it, close from a second terminal tears the environment down',
  { timeout: 300_000 },
  async () => {
    const child = spawn(process.execPath, devScript(), { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const name = environmentName({ owner: 'demo', name: 'shop' }, 1);
    const until = (what: string, pattern: RegExp, timeoutMs = 120_000) =>
      waitFor(
        what,
        () => {
          if (child.exitCode !== null) throw new Error(`dev exited ${child.exitCode}: ${err}`);
          return pattern.exec(out) ?? false;
        },
        { timeoutMs },
      );
    try {
      const ready = await until('the demo Ready', new RegExp(`^environment ${name}: Ready at ([0-9a-f]{7}),`, 'm'), 240_000);
      const first = ready[1]!;
      assert.match(out, /^ {2}push \[n\] +push a commit to pull request n/m, 'the commands are listed');

      // Typed in dev's own terminal.
      child.stdin.write('push\n');
      const pushed = await until(
        'the push',
        /^push: pushed ([0-9a-f]{7}) to pull request #1; webhook answered 202 .*"action":"synchronize"/m,
      );
      const second = pushed[1]!;
      assert.notEqual(second, first);
      await until('the redeploy under way', new RegExp(`^environment ${name}: \\w+ at ${first}, deploying ${second}`, 'm'));
      await until('the redeploy done', new RegExp(`^environment ${name}: Ready at ${second},`, 'm'));

      // From a second terminal: `npm run dev -- close`.
      const { stdout } = await promisify(execFile)(process.execPath, [...devScript(), 'close'], { cwd: root, env });
      assert.match(stdout, /^close: closed pull request #1; webhook answered 202 .*"op":"delete"/);
      await until('the close, echoed in dev', /^\(from another terminal\) close$/m);
      await until('the teardown', new RegExp(`^environment ${name}: gone$`, 'm'), 120_000);

      // A command for a pull request that does not exist: the second terminal hears why, exit 1.
      const missing = await promisify(execFile)(process.execPath, [...devScript(), 'push', '9'], { cwd: root, env }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^error: no pull request #9 in demo\/shop/);

      child.kill('SIGINT');
      assert.equal(await exited, 0, err);
      assert.doesNotMatch(err, /Warning/, 'no warnings (MaxListenersExceededWarning)');
    } finally {
      // Ctrl-C first: dev stops the cluster it started; only a dev that hangs is killed.
      if (child.exitCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
  },
);

test('npm run dev -- <command> with no dev running: says so, exit 2', async () => {
  const result = await promisify(execFile)(process.execPath, [...devScript(), 'push'], {
    cwd: root,
    env: { ...env, PREVIEW_DEV_SOCKET: path.join(workDir, 'none.sock') },
  }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );
  assert.equal(result.code, 2);
  assert.match(result.stderr, /no running npm run dev to send "push" to/);
});
