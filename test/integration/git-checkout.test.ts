// The checkout against real git: bare origin repositories on disk, served over file:// and over
// git's smart HTTP protocol (to see the credentials git actually sends).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GitOperationError, InvalidGitInputError } from '../../src/git/git-errors.js';
import { RepositoryCache, type CommitLocation } from '../../src/git/repository-cache.js';
import { createGitRepository, serveGitOverHttp, type GitRepository } from '../support/git-repository.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'git-checkout-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let caches = 0;

function newCache(options: Partial<ConstructorParameters<typeof RepositoryCache>[0]> = {}): RepositoryCache {
  return new RepositoryCache({
    cacheDir: path.join(scratch, `cache-${++caches}`),
    allowedProtocols: ['https:', 'http:', 'file:'],
    ...options,
  });
}

async function newOrigin(): Promise<GitRepository> {
  const origin = await createGitRepository({
    initialFiles: { 'README.md': '# app\n', '.preview/preview.yaml': 'hostPrefix: base\n' },
  });
  after(() => origin.cleanup());
  return origin;
}

function at(origin: GitRepository, sha: string, cloneUrl = origin.cloneUrl): CommitLocation {
  return { cloneUrl, owner: origin.owner, repo: origin.repo, sha };
}

function bareDir(cache: RepositoryCache, origin: GitRepository): string {
  return path.join(cache.cacheDir, 'repositories', origin.owner, `${origin.repo}.git`);
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    stdio: 'pipe',
    env: { PATH: process.env.PATH, HOME: scratch },
  }).trim();
}

function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).map((f) => path.join(dir, f)).filter((f) => lstatSync(f).isFile());
}

test('checks out a PR head SHA that no branch points to, at depth 1', async () => {
  const origin = await newOrigin();
  // A fork PR: the commit is reachable only through refs/pull/12/head.
  const head = await origin.openPullRequest(12, { files: { 'src/app.ts': 'export const v = 1;\n', 'README.md': null } });
  const cache = newCache();
  const seen = await cache.withCheckout(at(origin, head), async (dir) => ({
    head: git(dir, 'rev-parse', 'HEAD'),
    app: readFileSync(path.join(dir, 'src/app.ts'), 'utf8'),
    readme: existsSync(path.join(dir, 'README.md')),
    config: readFileSync(path.join(dir, '.preview/preview.yaml'), 'utf8'),
  }));
  assert.deepEqual(seen, { head, app: 'export const v = 1;\n', readme: false, config: 'hostPrefix: base\n' });
  const bare = bareDir(cache, origin);
  assert.equal(git(bare, 'rev-parse', '--is-shallow-repository'), 'true');
  assert.equal(git(bare, 'rev-list', '--count', head), '1', 'only the commit itself was fetched, not its parent');
});

test('a commit the remote does not have is a clear, typed error', async () => {
  const origin = await newOrigin();
  const missing = 'deadbeef'.repeat(5);
  let called = false;
  await assert.rejects(
    newCache().withCheckout(at(origin, missing), async () => {
      called = true;
    }),
    (err: unknown) => {
      assert.ok(err instanceof GitOperationError);
      assert.equal(err.reason, 'commit-not-found');
      assert.match(err.message, new RegExp(`commit ${missing} is not in ${origin.owner}/${origin.repo}`));
      return true;
    },
  );
  assert.equal(called, false);
  await assert.rejects(
    newCache().withCheckout({ ...at(origin, missing), cloneUrl: `${origin.cloneUrl}-gone` }, async () => {}),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'repository-not-found',
  );
});

test('a remote that stops answering is given up after the git timeout', async () => {
  const origin = await newOrigin();
  const silent = createServer(() => {
    /* never answers */
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  after(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const cloneUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/${origin.owner}/${origin.repo}.git`;
  const started = performance.now();
  await assert.rejects(
    newCache({ gitTimeoutMs: 1500 }).withCheckout(at(origin, 'a'.repeat(40), cloneUrl), async () => {}),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'timeout',
  );
  assert.ok(performance.now() - started < 10_000);
});

test('an invalid owner, repository, SHA or URL is rejected before git runs', async () => {
  const origin = await newOrigin();
  const sha = (await origin.resolveRef('refs/heads/main'))!;
  const good = at(origin, sha);
  const cases: Array<[Partial<CommitLocation>, string]> = [
    [{ owner: '--upload-pack=touch /tmp/pwned' }, 'owner'],
    [{ owner: '../../etc' }, 'owner'],
    [{ repo: '..' }, 'repo'],
    [{ repo: 'a/b' }, 'repo'],
    [{ sha: 'main' }, 'sha'],
    [{ sha: sha.slice(0, 12) }, 'sha'],
    [{ sha: `${sha}^{tree}` }, 'sha'],
    [{ cloneUrl: 'ext::sh -c touch% /tmp/pwned' }, 'cloneUrl'],
    [{ cloneUrl: 'https://x-access-token:ghs_x@github.com/o/r.git' }, 'cloneUrl'],
  ];
  for (const [change, field] of cases) {
    const cache = newCache();
    let called = false;
    await assert.rejects(
      cache.withCheckout({ ...good, ...change }, async () => {
        called = true;
      }),
      (err: unknown) => err instanceof InvalidGitInputError && err.field === field,
      `${JSON.stringify(change)} should be rejected as ${field}`,
    );
    await assert.rejects(cache.readFile({ ...good, ...change }, 'README.md'), InvalidGitInputError);
    assert.equal(called, false);
    // Nothing was created: no git process ran for the cache.
    assert.equal(existsSync(cache.cacheDir) && readdirSync(cache.cacheDir).includes('repositories'), false);
  }
  await assert.rejects(
    newCache().readFile(good, '../outside'),
    (err: unknown) => err instanceof InvalidGitInputError && err.field === 'path',
  );
  // Only the protocols configured are accepted (production: https only).
  const httpsOnly = new RepositoryCache({ cacheDir: path.join(scratch, 'https-only') });
  await assert.rejects(
    httpsOnly.withCheckout(good, async () => {}),
    (err: unknown) => err instanceof InvalidGitInputError && err.field === 'cloneUrl',
  );
});

test('concurrent checkouts of different SHAs of one repository stay separate and keep the cache intact', async () => {
  const origin = await newOrigin();
  const shas: string[] = [];
  for (let n = 1; n <= 4; n++) shas.push(await origin.openPullRequest(n, { files: { 'version.txt': `pr ${n}\n` } }));
  const cache = newCache({ maxConcurrentGitProcesses: 2 });
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, cache.runningGitProcesses);
  }, 1);
  try {
    // Each SHA twice, all at once.
    const results = await Promise.all(
      [...shas, ...shas].map((sha) =>
        cache.withCheckout(at(origin, sha), async (dir) => {
          await new Promise((r) => setTimeout(r, 20));
          return { sha, head: git(dir, 'rev-parse', 'HEAD'), version: readFileSync(path.join(dir, 'version.txt'), 'utf8'), dir };
        }),
      ),
    );
    for (const [i, result] of results.entries()) {
      assert.equal(result.head, result.sha);
      assert.equal(result.version, `pr ${(i % 4) + 1}\n`);
    }
    assert.equal(new Set(results.map((r) => r.dir)).size, 8, 'every checkout had its own worktree');
  } finally {
    clearInterval(sampler);
  }
  assert.ok(peak <= 2, `at most 2 git processes ran at once (saw ${peak})`);
  assert.ok(peak >= 1);
  const bare = bareDir(cache, origin);
  execFileSync('git', ['-C', bare, 'fsck', '--no-progress'], { stdio: 'pipe', env: { PATH: process.env.PATH, HOME: scratch } });
  assert.deepEqual(
    git(bare, 'for-each-ref', '--format=%(refname)', 'refs/preview-cache/').split('\n').sort(),
    shas.map((s) => `refs/preview-cache/${s}`).sort(),
  );
});

test('the worktree is removed after use, also when the caller throws', async () => {
  const origin = await newOrigin();
  const sha = (await origin.resolveRef('refs/heads/main'))!;
  const cache = newCache();
  let used = '';
  await cache.withCheckout(at(origin, sha), async (dir) => {
    used = dir;
  });
  assert.equal(existsSync(used), false);
  await assert.rejects(
    cache.withCheckout(at(origin, sha), async (dir) => {
      used = dir;
      writeFileSync(path.join(dir, 'scratch.txt'), 'untracked');
      throw new Error('render failed');
    }),
    /render failed/,
  );
  assert.equal(existsSync(used), false);
  assert.equal(
    git(bareDir(cache, origin), 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ')).length,
    1,
    'only the bare repository itself is left in the worktree list',
  );
});

test('a restarted operator clears worktrees its previous process left behind', async () => {
  const origin = await newOrigin();
  const sha = (await origin.resolveRef('refs/heads/main'))!;
  const cacheDir = path.join(scratch, 'restarted');
  const crashed = new RepositoryCache({ cacheDir, allowedProtocols: ['file:'] });
  let release!: () => void;
  let leftover = '';
  const stuck = crashed.withCheckout(at(origin, sha), (dir) => {
    leftover = dir;
    return new Promise<void>((r) => {
      release = r;
    });
  });
  while (!leftover) await new Promise((r) => setTimeout(r, 10));
  const restarted = new RepositoryCache({ cacheDir, allowedProtocols: ['file:'] });
  await restarted.withCheckout(at(origin, sha), async (dir) => {
    assert.equal(existsSync(leftover), false, 'the old worktree is gone');
    assert.ok(existsSync(path.join(dir, 'README.md')));
  });
  release();
  await stuck; // the old owner's cleanup copes with its worktree being gone
  assert.equal(
    git(path.join(cacheDir, 'repositories', origin.owner, `${origin.repo}.git`), 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree ')).length,
    1,
  );
});

test('reads a file at a SHA from the bare cache; absent is undefined; symlinks and directories are refused', async () => {
  const origin = await newOrigin();
  const head = await origin.openPullRequest(3, {
    files: {
      '.preview/preview.yaml': 'hostPrefix: pr\n',
      '.preview/leak.yaml': { symlinkTo: '/var/run/secrets/kubernetes.io/serviceaccount/token' },
    },
  });
  const cache = newCache();
  assert.equal(await cache.readFile(at(origin, head), '.preview/preview.yaml'), 'hostPrefix: pr\n');
  assert.equal(await cache.readFile(at(origin, head), '.preview/main.ts'), undefined);
  await assert.rejects(
    cache.readFile(at(origin, head), '.preview/leak.yaml'),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'not-a-regular-file' && /symbolic link/.test(err.message),
  );
  await assert.rejects(
    cache.readFile(at(origin, head), '.preview'),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'not-a-regular-file' && /directory/.test(err.message),
  );
  assert.equal(existsSync(path.join(cache.cacheDir, 'checkouts', origin.owner, origin.repo)), false, 'no worktree was made');
  const small = newCache({ maxFileBytes: 4 });
  await assert.rejects(
    small.readFile(at(origin, head), '.preview/preview.yaml'),
    (err: unknown) =>
      err instanceof GitOperationError && err.reason === 'not-a-regular-file' && /more than the 4 allowed/.test(err.message),
  );
});

test('the files of a commit are listed with one git process, and a commit the cache holds is never fetched again', async () => {
  const origin = await newOrigin();
  const head = await origin.openPullRequest(5, {
    files: {
      '.preview/preview.yaml': 'hostPrefix: pr\n',
      '.preview/main.ts': 'export {};\n',
      '.preview/link': { symlinkTo: '/etc/passwd' },
    },
  });
  const cacheDir = path.join(scratch, `cache-${++caches}`);
  const cache = newCache({ cacheDir });
  const counted = (c: RepositoryCache) => Object.fromEntries(c.gitCommands);
  const paths = ['.preview/preview.yaml', '.preview/main.ts', '.preview/link', '.preview/absent.yaml'];

  const files = await cache.listFiles(at(origin, head), paths);
  assert.deepEqual([...files.keys()].sort(), ['.preview/link', '.preview/main.ts', '.preview/preview.yaml']);
  assert.equal(files.get('.preview/link')?.kind, 'symlink');
  assert.equal(await cache.readEntry(at(origin, head), files.get('.preview/preview.yaml')!), 'hostPrefix: pr\n');
  await assert.rejects(
    cache.readEntry(at(origin, head), files.get('.preview/link')!),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'not-a-regular-file',
  );
  // A new repository and commit: init, fetch, one listing, one read per readEntry.
  assert.deepEqual(counted(cache), { init: 1, fetch: 1, 'ls-tree': 1, 'cat-file': 1 });

  await cache.listFiles(at(origin, head), paths);
  assert.deepEqual(counted(cache), { init: 1, fetch: 1, 'ls-tree': 2, 'cat-file': 1 }, 'the pinned commit is not fetched again');

  // A restarted operator reads the pins once, then needs no fetch either.
  const restarted = newCache({ cacheDir });
  assert.equal(await restarted.readFile(at(origin, head), '.preview/preview.yaml'), 'hostPrefix: pr\n');
  await restarted.readFile(at(origin, head), '.preview/main.ts');
  assert.deepEqual(counted(restarted), { worktree: 1, 'for-each-ref': 1, 'ls-tree': 2, 'cat-file': 2 });
});

test('symlinks in a checkout are plain files holding the link text', async () => {
  const origin = await newOrigin();
  const head = await origin.openPullRequest(4, { files: { '.preview/values.json': { symlinkTo: '/etc/passwd' } } });
  await newCache().withCheckout(at(origin, head), async (dir) => {
    const file = path.join(dir, '.preview/values.json');
    assert.equal(lstatSync(file).isSymbolicLink(), false);
    assert.equal(readFileSync(file, 'utf8'), '/etc/passwd');
  });
});

test('a branch resolves to its tip SHA, which then reads the base configuration of an untrusted PR', async () => {
  const origin = await newOrigin();
  const baseTip = await origin.commit('main', { '.preview/preview.yaml': 'hostPrefix: base-v2\n' });
  const head = await origin.openPullRequest(9, { files: { '.preview/preview.yaml': 'hostPrefix: evil\n' } });
  const cache = newCache();
  const resolved = await cache.resolveBranch(origin, 'main');
  assert.equal(resolved, baseTip);
  assert.equal(await cache.readFile(at(origin, resolved), '.preview/preview.yaml'), 'hostPrefix: base-v2\n');
  assert.equal(await cache.readFile(at(origin, head), '.preview/preview.yaml'), 'hostPrefix: evil\n');
  // A ref whose name merely ends like the branch is not the branch.
  await origin.setRef('refs/heads/feature/main', head);
  assert.equal(await cache.resolveBranch(origin, 'main'), baseTip);
  await assert.rejects(
    cache.resolveBranch(origin, 'does-not-exist'),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'branch-not-found',
  );
  await assert.rejects(cache.resolveBranch(origin, '--upload-pack=x'), InvalidGitInputError);
});

test('only the newest pinned commits stay in the cache', async () => {
  const origin = await newOrigin();
  const cache = newCache({ maxCachedCommits: 2 });
  const shas: string[] = [];
  for (let n = 1; n <= 3; n++) {
    shas.push(await origin.openPullRequest(n, { files: { 'n.txt': String(n) } }));
    await cache.readFile(at(origin, shas.at(-1)!), 'n.txt');
  }
  assert.deepEqual(
    git(bareDir(cache, origin), 'for-each-ref', '--format=%(refname)', 'refs/preview-cache/').split('\n').sort(),
    shas
      .slice(1)
      .map((s) => `refs/preview-cache/${s}`)
      .sort(),
  );
});

test('over HTTP the token is sent with each command, never stored, and a bad token is an authentication error', async (t) => {
  const origin = await newOrigin();
  const token = `ghs_${Math.random().toString(36).slice(2)}TOKEN`;
  const server = await serveGitOverHttp(origin, { token });
  after(() => server.close());
  const head = await origin.openPullRequest(5, { files: { 'a.txt': 'a' } });
  const cache = newCache();
  const location = { ...at(origin, head, server.cloneUrl), token };

  await assert.rejects(
    cache.withCheckout({ ...location, token: undefined }, async () => {}),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'authentication',
  );
  await assert.rejects(
    cache.resolveBranch({ ...location, token: 'ghs_wrong' }, 'main'),
    (err: unknown) => err instanceof GitOperationError && err.reason === 'authentication' && !err.message.includes('ghs_wrong'),
  );

  const expected = `basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;
  const before = server.requests.length;
  let started = performance.now();
  await cache.withCheckout(location, async (dir) => assert.equal(readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'a'));
  const cold = performance.now() - started;
  const fetchRequests = server.requests.slice(before);
  assert.ok(fetchRequests.length >= 2);
  assert.ok(
    fetchRequests.every((r) => r.authorization === expected),
    'every request of the fetch carried the token',
  );

  started = performance.now();
  await cache.withCheckout(location, async () => {});
  const warm = performance.now() - started;
  assert.equal(server.requests.length, before + fetchRequests.length, 'a cached commit is not fetched again');
  assert.equal(await cache.resolveBranch(location, 'main'), await origin.resolveRef('refs/heads/main'));
  assert.equal(await cache.readFile(location, 'a.txt'), 'a');
  t.diagnostic(`HTTP checkout of a small repository: cold ${cold.toFixed(0)} ms, warm ${warm.toFixed(0)} ms`);

  const secrets = [token, Buffer.from(`x-access-token:${token}`).toString('base64')];
  for (const file of filesUnder(cache.cacheDir)) {
    const content = readFileSync(file);
    for (const secret of secrets) assert.equal(content.includes(secret), false, `${file} contains the token`);
  }
});

test('a warm checkout of a cached commit fetches nothing; cold and warm timings of a small repository over file://', async (t) => {
  const origin = await newOrigin();
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) files[`src/module-${i}.ts`] = `export const value${i} = ${i};\n`.repeat(20);
  const first = await origin.openPullRequest(1, { files });
  const second = await origin.pushToPullRequest(1, { 'src/module-0.ts': 'changed\n' });
  const cache = newCache();
  const time = async (sha: string) => {
    const started = performance.now();
    await cache.withCheckout(at(origin, sha), async () => {});
    return performance.now() - started;
  };
  const cold = await time(first);
  const fetchesAfterCold = cache.gitCommands.get('fetch');
  assert.equal(fetchesAfterCold, 1, 'the cold checkout fetched');
  const warmSameSha = await time(first);
  assert.equal(cache.gitCommands.get('fetch'), fetchesAfterCold, 'a commit the cache holds is checked out without a fetch');
  const newSha = await time(second);
  const started = performance.now();
  await cache.readFile(at(origin, second), '.preview/preview.yaml');
  const read = performance.now() - started;
  // The times are figures for the reader, not assertions: on shared cores two samples can come out either way.
  t.diagnostic(
    `201 files: cold ${cold.toFixed(0)} ms; warm same SHA ${warmSameSha.toFixed(0)} ms; warm new SHA ${newSha.toFixed(0)} ms; readFile of a cached SHA ${read.toFixed(0)} ms`,
  );
});

/** Every process's command line (as anyone on the host may read it in /proc/<pid>/cmdline). */
function commandLines(): Array<{ pid: string; argv: string }> {
  const lines: Array<{ pid: string; argv: string }> = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      lines.push({ pid, argv: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') });
    } catch {
      // The process ended meanwhile.
    }
  }
  return lines;
}

test("the token is on no process's command line while git uses it, and it still authenticates", async () => {
  const origin = await newOrigin();
  const token = `ghs_${randomBytes(16).toString('hex')}`;
  const secrets = [token, Buffer.from(`x-access-token:${token}`).toString('base64')];
  // Looked at while git waits for each authorised answer: its processes are all running then.
  const looks: Array<{ gitProcesses: number; leaks: string[] }> = [];
  const server = await serveGitOverHttp(origin, {
    token,
    beforeAnswer: () => {
      const port = new URL(server.cloneUrl).host;
      const lines = commandLines();
      looks.push({
        gitProcesses: lines.filter((l) => l.argv.includes(port)).length,
        leaks: lines.filter((l) => secrets.some((s) => l.argv.includes(s))).map((l) => `${l.pid}: ${l.argv.split(' ')[0]}`),
      });
    },
  });
  after(() => server.close());
  const head = await origin.openPullRequest(6, { files: { 'a.txt': 'a' } });
  const location = { ...at(origin, head, server.cloneUrl), token };
  const cache = newCache();

  await cache.withCheckout(location, async (dir) => assert.equal(readFileSync(path.join(dir, 'a.txt'), 'utf8'), 'a'));
  assert.equal(await cache.resolveBranch(location, 'main'), await origin.resolveRef('refs/heads/main'));
  assert.ok(looks.length >= 3, `${looks.length} authorised requests`);
  assert.ok(
    looks.every((l) => l.gitProcesses >= 1),
    'every look saw the git processes talking to the server',
  );
  assert.deepEqual(
    looks.flatMap((l) => l.leaks),
    [],
    'processes whose command line carries the token',
  );
});

/** A commit whose tree names one subtree `fanout` times at each of `levels` levels, over a blob of `blobBytes`. */
function gitBomb(origin: GitRepository, levels: number, fanout: number, blobBytes: number): string {
  const run = (args: string[], input?: string) =>
    execFileSync('git', ['-C', origin.originPath, ...args], {
      encoding: 'utf8',
      input,
      env: {
        PATH: process.env.PATH,
        HOME: scratch,
        GIT_AUTHOR_NAME: 'a',
        GIT_AUTHOR_EMAIL: 'a@example.com',
        GIT_COMMITTER_NAME: 'a',
        GIT_COMMITTER_EMAIL: 'a@example.com',
      },
    }).trim();
  let entry = { mode: '100644', type: 'blob', id: run(['hash-object', '-w', '--stdin'], 'x'.repeat(blobBytes)) };
  for (let level = 0; level < levels; level++) {
    const lines = Array.from(
      { length: fanout },
      (_, i) => `${entry.mode} ${entry.type} ${entry.id}\t${entry.type === 'blob' ? 'f' : 'd'}${i}`,
    );
    entry = { mode: '040000', type: 'tree', id: run(['mktree'], `${lines.join('\n')}\n`) };
  }
  const commit = run(['commit-tree', entry.id, '-m', 'bomb'], '');
  run(['update-ref', 'refs/pull/66/head', commit]);
  return commit;
}

test('a commit larger than a checkout may be is refused from its tree, before anything is written', async () => {
  const origin = await newOrigin();
  const cache = newCache();
  const checkouts = path.join(cache.cacheDir, 'checkouts');
  const refused = async (sha: string, message: RegExp) => {
    let used = false;
    await assert.rejects(
      cache.withCheckout(at(origin, sha), async () => {
        used = true;
      }),
      (err: unknown) => err instanceof GitOperationError && err.reason === 'too-large' && message.test(err.message),
    );
    assert.equal(used, false);
    assert.deepEqual(existsSync(checkouts) ? filesUnder(checkouts) : [], [], 'nothing checked out');
  };
  // 256 files of 1 MiB from a pack of a few kilobytes: 256 MiB, over the 200 MiB a checkout may be.
  await refused(
    gitBomb(origin, 2, 16, 1024 * 1024),
    /is larger than a checkout may be \(256 files, 16 directories, 268435456 bytes; at most/,
  );
  // Ten levels of ten: ten billion entries, whose listing alone would not fit in memory.
  await refused(gitBomb(origin, 10, 10, 1), /its tree lists more than 16777216 bytes of entries/);
  // Within the limits, as usual.
  const small = newCache({ maxCheckout: { files: 300, directories: 20, bytes: 300 * 1024 * 1024 } });
  const files = await small.withCheckout(
    at(origin, gitBomb(origin, 2, 16, 1024 * 1024)),
    async (dir) => filesUnder(dir).filter((f) => path.basename(f) !== '.git').length,
  );
  assert.equal(files, 256);
});

test("a checkout writes each blob as committed, whatever the repository's .gitattributes ask (ident, encodings, CRLF)", async () => {
  const origin = await newOrigin();
  const dollarId = '$' + 'Id$\n';
  const head = await origin.openPullRequest(67, {
    files: {
      '.gitattributes': '*.txt ident working-tree-encoding=UTF-32LE\n*.crlf text eol=crlf\n',
      'a.txt': dollarId.repeat(64),
      'b.crlf': 'one\ntwo\n',
    },
  });
  const written = await newCache().withCheckout(at(origin, head), async (dir) => ({
    txt: readFileSync(path.join(dir, 'a.txt'), 'utf8'),
    crlf: readFileSync(path.join(dir, 'b.crlf'), 'utf8'),
  }));
  assert.equal(written.txt, dollarId.repeat(64), 'no $Id$ expanded, no UTF-32: as committed, as the tree counted it');
  assert.equal(written.crlf, 'one\ntwo\n');
});
