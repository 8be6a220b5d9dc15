// The build lock of a Go binary: a process that waits for another's (cold, many-minute) build
// says so at once, and a lock left by a process that died is taken over instead of waited on forever.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureGoBinary, goSourceHash, type GoBinary } from './go-binary.js';

let dir = '';
before(async () => (dir = await mkdtemp(path.join(os.tmpdir(), 'go-binary-'))));
after(async () => rm(dir, { recursive: true, force: true }));

/** A module with no Go files: a build of it fails at once (no many-minute compile in a test). */
function emptyModule(name: string): { binary: GoBinary; lock: string; target: string } {
  const moduleDir = path.join(dir, name, 'module');
  mkdirSync(moduleDir, { recursive: true });
  writeFileSync(path.join(moduleDir, 'go.mod'), 'module example.com/empty\n\ngo 1.22\n');
  const binary = { name, moduleDir, cacheDir: path.join(dir, name, 'cache'), ldflags: '', stamp: '', announce: 'building nothing' };
  const hash = goSourceHash(moduleDir, '');
  mkdirSync(binary.cacheDir, { recursive: true });
  return { binary, lock: path.join(binary.cacheDir, `${hash}.lock`), target: path.join(binary.cacheDir, hash, name) };
}

describe('ensureGoBinary while another process builds', () => {
  it('says it waits, then returns the binary the other process built', async () => {
    const { binary, lock, target } = emptyModule('waiting');
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(process.pid));
    const lines: string[] = [];
    const ensured = ensureGoBinary(binary, { log: (line) => lines.push(line) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(lines, [`waiting: another process (pid ${process.pid}) is building it; waiting for that build (${lock})`]);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, '');
    assert.equal(await ensured, target);
    assert.ok(existsSync(lock), "the other process's lock is its own to remove");
  });

  it('takes over a lock whose process is gone', async () => {
    const { binary, lock } = emptyModule('stale');
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(dead));
    const lines: string[] = [];
    // The build itself runs (and fails: the module has no Go files), so the lock was taken.
    await assert.rejects(ensureGoBinary(binary, { log: (line) => lines.push(line) }), /stale: go build failed|cannot run go/);
    assert.equal(lines[0], 'stale: building nothing');
    assert.equal(existsSync(lock), false, 'released after the build');
  });
});
