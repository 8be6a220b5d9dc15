// The CLI as a new user meets it: a fresh `git clone` (no dist/, only node_modules from `npm ci`,
// linked here), where `npx preview-operator <command>` must work from the sources, every command
// must answer `--help` with exit code 0, and `npx cdk8s synth` must leave `npm run build`'s dist/ alone.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));
let clone = '';
let workDir = '';

async function run(command: string, args: string[], timeout = 120_000): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, {
      cwd: clone,
      timeout,
      maxBuffer: 16 * 1024 * 1024,
      // No settings from the caller's environment: only what a fresh shell would have.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workDir, npm_config_update_notifier: 'false' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const npx = (...args: string[]) => run('npx', ['--no-install', ...args]);

before(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'preview-cli-clone-'));
  clone = path.join(workDir, 'preview-operator');
  await promisify(execFile)('git', ['clone', '--quiet', '--no-hardlinks', root, clone]);
  await symlink(path.join(root, 'node_modules'), path.join(clone, 'node_modules'));
});
after(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('npx preview-operator in a fresh clone', () => {
  it('has no build: the launcher runs the sources', () => {
    assert.equal(existsSync(path.join(clone, 'dist')), false);
  });

  it('--help and help: the commands, exit 0', async () => {
    for (const argv of [['--help'], ['help']]) {
      const result = await npx('preview-operator', ...argv);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /^Usage: preview-operator <command>/);
    }
  });

  it('<command> --help for every command, exit 0', async () => {
    for (const command of ['run', 'synth', 'renderer', 'version', 'help']) {
      const result = await npx('preview-operator', command, '--help');
      assert.equal(result.code, 0, `${command} --help: ${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^Usage: preview-operator ${command}\\b`), command);
    }
    const viaHelp = await npx('preview-operator', 'help', 'synth');
    assert.equal(viaHelp.code, 0, viaHelp.stderr);
    assert.match(viaHelp.stdout, /--repo <path>/);
  });

  it("version: the package's, exit 0", async () => {
    const { version } = JSON.parse(await readFile(path.join(clone, 'package.json'), 'utf8')) as { version: string };
    const result = await npx('preview-operator', 'version');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${version}\n`);
  });

  it('after a build, the launcher runs dist/src/main.js, and npx cdk8s synth leaves dist/ alone', async () => {
    // A stand-in for `npm run build`'s output (the real build takes a minute): what runs is visible.
    await mkdir(path.join(clone, 'dist', 'src'), { recursive: true });
    await writeFile(path.join(clone, 'dist', 'src', 'main.js'), 'process.stdout.write(`built ${process.argv.slice(2).join(" ")}\\n`);\n');
    const built = await npx('preview-operator', 'version');
    assert.equal(built.code, 0, built.stderr);
    assert.equal(built.stdout, 'built version\n');

    const synth = await run(path.join(clone, 'node_modules', '.bin', 'cdk8s'), ['--no-check-upgrade', 'synth'], 300_000);
    assert.equal(synth.code, 0, synth.stderr);
    assert.ok(existsSync(path.join(clone, 'dist', 'src', 'main.js')), 'dist/ survives cdk8s synth');
    assert.match(await readFile(path.join(clone, 'cdk8s.out', 'preview.k8s.yaml'), 'utf8'), /^kind: Ingress$/m);
  });
});
