// `preview-operator synth`: what a pull request of a local repository would get, through the
// operator's own validation, sandbox and policy — printed as YAML, with errors a repository
// author can act on, and usage errors refused with exit code 2.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { createGitRepository, type GitRepository } from '../support/git-repository.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const example = (file: string) => readFile(new URL(`../../examples/repository/.preview/${file}`, import.meta.url), 'utf8');

async function synth(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts', 'synth', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const repositories: GitRepository[] = [];
after(async () => {
  for (const r of repositories) await r.cleanup();
});

test('a repository with .preview/preview.yaml and main.ts: the manifests the operator would apply', async () => {
  const repo = await createGitRepository({
    owner: 'acme',
    repo: 'reco',
    initialFiles: { '.preview/preview.yaml': await example('preview.yaml'), '.preview/main.ts': await example('main.ts') },
  });
  repositories.push(repo);
  const result = await synth(
    '--repo',
    repo.originPath,
    '--pr',
    '42',
    '--repository=acme/reco',
    '--preview-domain=preview.example.com',
    '--tls-issuer=none',
  );
  assert.equal(result.code, 0, result.stderr);
  const objects = parseAllDocuments(result.stdout).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } });
  const namespace = objects[0]!;
  assert.equal(namespace.kind, 'Namespace');
  assert.match(namespace.metadata.name, /^pr-42-reco-[0-9a-f]{8}$/);
  const kinds = objects.map((o) => o.kind);
  for (const kind of ['ResourceQuota', 'LimitRange', 'NetworkPolicy', 'Algorithm', 'Database', 'Ingress'])
    assert.ok(kinds.includes(kind), `${kind} in ${kinds}`);
  assert.ok(!kinds.includes('Certificate'), '--tls-issuer=none renders no Certificate');
  assert.ok(
    objects.slice(1).every((o) => o.metadata.namespace === namespace.metadata.name),
    "everything in the environment's namespace",
  );
  assert.match(result.stderr, /rendered with \.preview\/main\.ts in the sandbox/);
  assert.match(result.stderr, /URL http:\/\/reco-pr-42-[0-9a-f]{12}\.preview\.example\.com/);
});

test('an invalid configuration: every error with its path, nothing on stdout, exit 1', async () => {
  const repo = await createGitRepository({
    initialFiles: { '.preview/preview.yaml': 'version: 1\nalgorithms:\n  - name: Bad_Name\n    replicas: -1\n' },
  });
  repositories.push(repo);
  const result = await synth('--repo', repo.originPath);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /ConfigInvalid/);
  assert.match(result.stderr, /\/algorithms\/0\/name: must be lower-case/);
  assert.match(result.stderr, /\/algorithms\/0\/replicas: must be >= 0/);
});

test('a type error in main.ts: reported with file:line:col before anything runs, exit 1', async () => {
  const main = (await example('main.ts')).replace('context.identity.sha,', 'context.identity.shaa,');
  const line = main.split('\n').findIndex((l) => l.includes('shaa')) + 1;
  const column = main.split('\n')[line - 1]!.indexOf('shaa') + 1;
  const repo = await createGitRepository({
    initialFiles: { '.preview/preview.yaml': await example('preview.yaml'), '.preview/main.ts': main },
  });
  repositories.push(repo);
  const result = await synth('--repo', repo.originPath);
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /TypeError: \.preview\/main\.ts does not type-check \(1 error\); nothing was rendered/);
  assert.match(
    result.stderr,
    new RegExp(`^\\.preview/main\\.ts:${line}:${column} - error TS2551: Property 'shaa' does not exist on type 'PreviewIdentity'`, 'm'),
  );
  assert.doesNotMatch(result.stderr, /rendered with/);
});

test('usage errors: exit 2 and every one named', async () => {
  const result = await synth('--pr', 'seven', '--tls-issuer-kind=Vault');
  assert.equal(result.code, 2);
  assert.match(result.stderr, /--repo: required/);
  assert.match(result.stderr, /--pr: must be a pull request number/);
  assert.match(result.stderr, /--tls-issuer-kind .*must be one of/);
});
