// The sandbox against real processes: each program is written into a scratch checkout as
// `.preview/main.ts` and run by the real Sandbox (esbuild bundle, a Node child process under the
// permission model). The chart here is a plain cdk8s Chart, so these tests are about confinement;
// rendering with PreviewEnvironmentChart is in sandbox-preview-chart.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sandbox, type SandboxOptions, type SandboxResult } from '../../src/synth/sandbox.js';
import { SandboxError, type SandboxFailureReason } from '../../src/synth/sandbox-error.js';

const chartFactory = fileURLToPath(new URL('../fixtures/sandbox/plain-chart.ts', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'sandbox-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// A secret next to every checkout, and secrets in the operator's environment.
const secretFile = path.join(scratch, 'operator-secret.txt');
writeFileSync(secretFile, 'the operator secret');
writeFileSync(path.join(scratch, 'outside.ts'), 'export default "outside the repository";\n');
const githubToken = `ghs_${Math.random().toString(36).slice(2)}`;
before(() => {
  process.env.GITHUB_TOKEN = githubToken;
  process.env.KUBECONFIG = secretFile;
});

let checkouts = 0;
function checkout(files: Record<string, string>): string {
  const dir = path.join(scratch, `checkout-${++checkouts}`);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  return dir;
}

function run(main: string, options: SandboxOptions = {}, extraFiles: Record<string, string> = {}): Promise<SandboxResult> {
  const sandbox = new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 10_000, ...options });
  return sandbox.run({ checkoutDir: checkout({ '.preview/main.ts': main, ...extraFiles }), input: { namespace: 'pr-7-app' } });
}

async function failure(promise: Promise<unknown>, reason: SandboxFailureReason, message: RegExp): Promise<SandboxError> {
  let caught: unknown;
  await promise.then(
    () => assert.fail(`expected a ${reason} failure`),
    (err: unknown) => {
      caught = err;
    },
  );
  assert.ok(caught instanceof SandboxError, `expected a SandboxError, got ${String(caught)}`);
  assert.equal(caught.reason, reason, caught.message);
  assert.match(caught.message, message);
  for (const secret of [githubToken, 'the operator secret']) {
    assert.equal(caught.message.includes(secret) || caught.logs.includes(secret), false, 'no secret in the error or logs');
  }
  return caught;
}

test('a good program renders manifests; what it prints is kept as logs, apart from the answer', async (t) => {
  const result = await run(
    `
    import { Chart } from 'cdk8s';
    import { k8s } from 'cdk8s-plus-33';
    import { readFileSync } from 'node:fs';
    import { suffix } from './lib/naming.js';
    import settings from './settings.json';
    export default function (chart: Chart, context: { namespace: string }): void {
      console.log('rendering for', context.namespace);
      new k8s.KubeConfigMap(chart, 'config', {
        metadata: { name: 'app-' + suffix },
        data: { greeting: settings.greeting, readme: readFileSync('README.md', 'utf8') },
      });
    }
  `,
    {},
    {
      '.preview/lib/naming.ts': 'export const suffix: string = "settings";\n',
      '.preview/settings.json': '{ "greeting": "hello" }\n',
      'README.md': '# the app\n',
    },
  );
  assert.deepEqual(result.manifests, [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-settings', namespace: 'pr-7-app' },
      data: { greeting: 'hello', readme: '# the app\n' },
    },
  ]);
  assert.equal(result.logs, 'rendering for pr-7-app\n');
  t.diagnostic(`good program: bundle ${result.bundleMs.toFixed(0)} ms, run ${result.runMs.toFixed(0)} ms`);
});

test("process.env is empty: the operator's token and kubeconfig do not reach the code", async () => {
  const result = await run(`
    import { Chart } from 'cdk8s';
    import { k8s } from 'cdk8s-plus-33';
    export default function (chart: Chart): void {
      new k8s.KubeConfigMap(chart, 'env', { metadata: { name: 'env' }, data: { env: JSON.stringify(process.env) } });
      console.log(JSON.stringify(process.env));
    }
  `);
  assert.equal(process.env.GITHUB_TOKEN, githubToken, 'the operator has the token');
  assert.deepEqual(result.manifests[0]!.data, { env: '{}' });
  assert.equal(JSON.stringify(result).includes(githubToken), false);
});

test('reading a file outside the checkout is denied and reported with the place in the code', async () => {
  await failure(
    run(`
    import { readFileSync } from 'node:fs';
    export default function (): void {
      readFileSync('/etc/passwd', 'utf8');
    }
  `),
    'permission',
    /^\.preview\/main\.ts tried to read \/etc\/passwd; it may read only files of the repository \(at \.preview\/main\.ts:4:7\)$/,
  );
  await failure(
    run(`
    import { readFileSync } from 'node:fs';
    export default function (): void { readFileSync('../operator-secret.txt', 'utf8'); }
  `),
    'permission',
    /tried to read \.\.\/operator-secret\.txt/,
  );
  // The kubeconfig path is known to the attacker even without the environment.
  await failure(
    run(`
    import { readFileSync } from 'node:fs';
    export default function (): void { readFileSync(${JSON.stringify(secretFile)}, 'utf8'); }
  `),
    'permission',
    /tried to read .*operator-secret\.txt/,
  );
});

// Bounded: before the fix, the read of /dev/ptmx never ended.
test(
  'a sourceMappingURL comment makes the compiler open nothing: no file outside the checkout, no device',
  { timeout: 30_000 },
  async () => {
    // Shaped like a source map, which the compiler would have copied into the run's own bundle.
    const outsideMap = path.join(scratch, 'operator-map.json');
    writeFileSync(outsideMap, JSON.stringify({ version: 3, sources: ['operator-secret-7f3a'], mappings: 'AAAA' }), { mode: 0o600 });
    const main = `
    import { Chart } from 'cdk8s';
    import { k8s } from 'cdk8s-plus-33';
    import { readFileSync } from 'node:fs';
    import './blocks';
    import './endless';
    import './linked-cjs.cjs';
    import './linked-cts.cts';
    import './linked-tsx.tsx';
    import './linked-jsx.jsx';
    export default function (chart: Chart): void {
      // The run may read its own bundle: whatever the compiler read for it would be there.
      const bundle = readFileSync(process.argv[1]!, 'utf8');
      const map = /sourceMappingURL=data:application\\/json;base64,(.*)$/m.exec(bundle)![1]!;
      const sources = (JSON.parse(Buffer.from(map, 'base64').toString()) as { sources: string[] }).sources;
      new k8s.KubeConfigMap(chart, 'seen', { metadata: { name: 'seen' }, data: { sources: sources.join(',') } });
    }
    //# sourceMappingURL=${outsideMap}
  `;
    const started = Date.now();
    const result = await run(
      main,
      { timeoutMs: 8_000 },
      {
        // A read of /dev/ptmx never ends; one of /dev/zero never stops growing.
        '.preview/blocks.ts': 'export const blocks = 1;\n//# sourceMappingURL=/dev/ptmx\n',
        '.preview/endless.ts': 'export const endless = 1;\n/*# sourceMappingURL=/dev/zero */\n',
        // Every extension esbuild loads by itself.
        '.preview/linked-cjs.cjs': `module.exports = 1;\n//# sourceMappingURL=${outsideMap}\n`,
        '.preview/linked-cts.cts': `export const cts = 1;\n//# sourceMappingURL=${outsideMap}\n`,
        '.preview/linked-tsx.tsx': `export const tsx = 1;\n//# sourceMappingURL=${outsideMap}\n`,
        '.preview/linked-jsx.jsx': `export const jsx = 1;\n//# sourceMappingURL=${outsideMap}\n`,
      },
    );
    const sources = (result.manifests[0]!.data as { sources: string }).sources;
    assert.doesNotMatch(sources, /operator-secret/);
    assert.match(sources, /main\.ts/, "the bundle still maps back to the repository's files");
    assert.ok(Date.now() - started < 8_000, `rendered within the run's time limit (${Date.now() - started} ms)`);
  },
);

test('a file of another kind than TypeScript, JavaScript or JSON is not compiled in', async () => {
  await failure(
    run(`import notes from './notes.txt';\nexport default function (): void { void notes; }\n`, {}, { '.preview/notes.txt': 'hello\n' }),
    'permission',
    /\.preview\/notes\.txt is not TypeScript, JavaScript or JSON/,
  );
});

test('starting a process or a worker thread is denied', async () => {
  await failure(
    run(`
    import { execSync } from 'node:child_process';
    export default function (): void { execSync('id > /tmp/pwned'); }
  `),
    'permission',
    /tried to start a process/,
  );
  await failure(
    run(`
    import { Worker } from 'node:worker_threads';
    export default function (): void { new Worker('1', { eval: true }); }
  `),
    'permission',
    /tried to start a worker thread/,
  );
});

test('a program that loops forever is killed at the time limit', async () => {
  const started = performance.now();
  await failure(
    run('export default function (): void { for (;;) {} }', { timeoutMs: 3000 }),
    'timeout',
    /^\.preview\/main\.ts did not finish within 3 s and was stopped$/,
  );
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 3000 && elapsed < 8000, `stopped after ${elapsed.toFixed(0)} ms`);
  // A promise that never settles is the same.
  await failure(
    run('export default function (): Promise<void> { return new Promise(() => { setInterval(() => {}, 1000); }); }', { timeoutMs: 3000 }),
    'timeout',
    /did not finish within 3 s/,
  );
});

test('unbounded memory is stopped: heap by the V8 limit, buffers by the resident-memory limit', async () => {
  await failure(
    run(
      `
    export default function (): void {
      const hoard: string[] = [];
      for (let i = 0; ; i++) hoard.push('x'.repeat(64) + i);
    }
  `,
      { maxHeapMb: 64, timeoutMs: 30_000 },
    ),
    'memory',
    /used more than its 64 MB heap/,
  );
  await failure(
    run(
      `
    export default function (): void {
      const hoard: Buffer[] = [];
      for (;;) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1));
    }
  `,
      { maxRssMb: 200, timeoutMs: 30_000 },
    ),
    'memory',
    /used more than 200 MB of memory/,
  );
});

test('the network is closed: fetch, network modules and computed imports', async () => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  await failure(
    run(`export default async function (): Promise<void> { await fetch(${JSON.stringify(url)}); }`),
    'permission',
    /tried to use the network/,
  );
  await failure(
    run(`
    import http from 'node:http';
    export default function (): void { http.get(${JSON.stringify(url)}); }
  `),
    'permission',
    /node:http is not available in the preview sandbox/,
  );
  await failure(
    run(`
    export default function (): void { (process as unknown as { getBuiltinModule(id: string): unknown }).getBuiltinModule('node:net'); }
  `),
    'permission',
    /tried to load node:net, which is not available in the sandbox/,
  );
  await failure(
    run(`
    export default async function (): Promise<void> {
      const name = ['node', 'http'].join(':');
      const http = await import(name);
      http.get(${JSON.stringify(url)});
    }
  `),
    'exception',
    /Dynamic require of "node:http" is not supported/,
  );
  assert.equal(requests, 0, 'no request reached the server');
});

test('the code cannot signal the operator, write files or generate code from strings', async () => {
  await failure(
    run('export default function (): void { process.kill(process.ppid, "SIGKILL"); }'),
    'permission',
    /tried to send a signal to process \d+/,
  );
  const target = path.join(scratch, 'written-by-sandbox.txt');
  await failure(
    run(`
    import { writeFileSync } from 'node:fs';
    export default function (): void { writeFileSync(${JSON.stringify(target)}, 'x'); }
  `),
    'permission',
    /tried to write .*written-by-sandbox\.txt; it may not write files/,
  );
  assert.equal(existsSync(target), false);
  await failure(
    run('export default function (): void { new Function("return 1")(); }'),
    'exception',
    /EvalError: Code generation from strings disallowed/,
  );
});

test('imports are limited to the repository, the construct packages and safe built-ins', async () => {
  const outside = path.join(scratch, 'outside.ts');
  await failure(
    run(`import outside from ${JSON.stringify(outside)};\nexport default function (): void { console.log(outside); }`),
    'permission',
    /outside\.ts" is outside the repository/,
  );
  await failure(
    run(`import YAML from 'yaml';\nexport default function (): void { console.log(YAML); }`),
    'permission',
    /"yaml" is not available in the preview sandbox; \.preview\/main\.ts may import preview-operator\/constructs, cdk8s, cdk8s-plus-33, constructs/,
  );
});

test('errors in the code are reported as exceptions with their place; a wrong shape is bad output', async () => {
  await failure(
    run('export default function (): void {\n  const n = 41;\n  throw new RangeError(`bad value ${n + 1}`);\n}\n'),
    'exception',
    /^\.preview\/main\.ts threw RangeError: bad value 42 \(at \.preview\/main\.ts:3:9\)$/,
  );
  await failure(
    run('throw new Error("at the top level");\nexport default function (): void {}\n'),
    'exception',
    /threw Error: at the top level \(at \.preview\/main\.ts:1:7\)/,
  );
  await failure(
    run('export default function (: void {\n'),
    'compile',
    /^\.preview\/main\.ts could not be compiled:\n\.preview\/main\.ts:1:25: /,
  );
  await failure(run('export const notDefault = 1;\n'), 'bad-output', /must export a default function \(chart, context\) => void/);
  await failure(
    run('export default function (): void { process.exit(3); }'),
    'bad-output',
    /exited with code 3 before producing manifests/,
  );
  await failure(
    run(`import { writeSync } from 'node:fs';\nexport default function (): void { writeSync(3, 'forged'); }`),
    'bad-output',
    /wrote something other than the sandbox's answer to its result channel/,
  );
  await failure(
    run(
      `
    import { Chart } from 'cdk8s';
    import { k8s } from 'cdk8s-plus-33';
    export default function (chart: Chart): void {
      for (let i = 0; i < 50; i++) new k8s.KubeConfigMap(chart, 'c' + i, { data: { blob: 'x'.repeat(10_000) } });
    }
  `,
      { maxOutputBytes: 100_000 },
    ),
    'bad-output',
    /produced more than 100000 bytes of output/,
  );
});

test('the entry must be a file inside the repository', async () => {
  const sandbox = new Sandbox<{ namespace: string }>({ chartFactory });
  const dir = checkout({ 'README.md': '# no preview code\n' });
  await failure(
    sandbox.run({ checkoutDir: dir, input: { namespace: 'x' } }),
    'compile',
    /^\.preview\/main\.ts does not exist in the repository$/,
  );
  await failure(
    sandbox.run({ checkoutDir: dir, entry: '../outside.ts', input: { namespace: 'x' } }),
    'permission',
    /is not a path inside the repository/,
  );
});

test('a checkout containing a symlink is refused before anything runs', async () => {
  const dir = checkout({ '.preview/main.ts': 'export default function (): void {}\n' });
  symlinkSync(secretFile, path.join(dir, '.preview/values.json'));
  await failure(
    new Sandbox<{ namespace: string }>({ chartFactory }).run({ checkoutDir: dir, input: { namespace: 'x' } }),
    'permission',
    /contains a symbolic link \(\.preview\/values\.json\)/,
  );
});
