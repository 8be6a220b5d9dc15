// The kernel boundary around repository code, attacked the way a hostile `.preview/main.ts`
// would: each program records what the kernel answered in a ConfigMap (so the test sees the
// attempt was made and refused, not that it never ran), and the test checks the operator side
// (its inspector, its life, a listener on 127.0.0.1, a sibling run) was untouched.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import inspector from 'node:inspector';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Sandbox } from '../../src/synth/sandbox.js';
import { SandboxError } from '../../src/synth/sandbox-error.js';
import { isolationSupport } from '../../src/synth/sandbox-isolation.js';
import { RemoteSandbox, serveSandbox } from '../../src/synth/sandbox-remote.js';

const chartFactory = fileURLToPath(new URL('../fixtures/sandbox/plain-chart.ts', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'sandbox-isolation-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

let checkouts = 0;
function checkout(main: string): string {
  const dir = path.join(scratch, `checkout-${++checkouts}`);
  mkdirSync(path.join(dir, '.preview'), { recursive: true });
  writeFileSync(path.join(dir, '.preview/main.ts'), main);
  return dir;
}

/** A program whose default export runs `body` (which returns a record) and renders it as a ConfigMap. */
function recording(body: string): string {
  return `
    import { Chart } from 'cdk8s';
    import { k8s } from 'cdk8s-plus-33';
    import * as fs from 'node:fs';
    export default async function (chart: Chart): Promise<void> {
      const seen: Record<string, string> = {};
      const attempt = async (name: string, action: () => unknown) => {
        try { seen[name] = String(await action()); } catch (err) { seen[name] = String((err as { code?: string }).code ?? (err as Error).message); }
      };
      ${body}
      new k8s.KubeConfigMap(chart, 'seen', { metadata: { name: 'seen' }, data: seen });
    }
  `;
}

async function seen(main: string): Promise<Record<string, string>> {
  const result = await new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 15_000 }).run({
    checkoutDir: checkout(main),
    input: { namespace: 'pr-1-app' },
  });
  return result.manifests[0]!.data as Record<string, string>;
}

test('this machine can isolate: the tests below run repository code as the product does', () => {
  const support = isolationSupport();
  assert.ok(support.ok, support.ok ? '' : support.reason);
});

test("inspector takeover: activating the operator's inspector is refused by the kernel", async () => {
  const data = await seen(
    recording(`
    await attempt('debug', () => (process as unknown as { _debugProcess(pid: number): void })._debugProcess(process.ppid));
    await attempt('connect', () => new Promise((resolve, reject) => {
      const socket = new (process.stdout.constructor as unknown as new () => import('node:net').Socket)();
      socket.on('error', reject).connect(9229, '127.0.0.1', () => resolve('connected'));
    }));
  `),
  );
  assert.match(data.debug!, /EPERM|ERR_ACCESS_DENIED/, 'the SIGUSR1 to the operator is refused');
  assert.equal(inspector.url(), undefined, 'the operator did not open an inspector');
  assert.equal(data.connect, 'ENETUNREACH', 'no route to 127.0.0.1 from the sandbox');
});

test('killing the operator: signals to the parent are refused; the raw binding answers EPERM', async () => {
  const data = await seen(
    recording(`
    const raw = process as unknown as { _kill(pid: number, signal: number): number };
    await attempt('probe', () => raw._kill(process.ppid, 0));
    await attempt('kill', () => raw._kill(process.ppid, 9));
  `),
  );
  // uv_kill answers -errno: -1 is EPERM.
  assert.equal(data.probe, '-1');
  assert.equal(data.kill, '-1');
});

test('a sibling run cannot be signalled: every run has a uid of its own', async () => {
  // A process under another run's kind of identity, as a sibling sandbox would be.
  const sibling = spawn('setpriv', ['--reuid=3000000007', '--regid=3000000007', '--clear-groups', '--', 'sleep', '30'], {
    stdio: 'ignore',
  });
  after(() => sibling.kill('SIGKILL'));
  await new Promise((resolve) => sibling.once('spawn', resolve));
  const data = await seen(
    recording(`
    const raw = process as unknown as { _kill(pid: number, signal: number): number };
    await attempt('kill', () => raw._kill(${sibling.pid}, 9));
    await attempt('uid', () => process.getuid!());
  `),
  );
  assert.equal(data.kill, '-1');
  assert.notEqual(Number(data.uid), 3000000007);
  assert.notEqual(Number(data.uid), process.getuid!());
  assert.equal(sibling.exitCode, null, 'the sibling still runs');
  assert.equal(sibling.signalCode, null);
});

test('network: a socket to a listener on 127.0.0.1 never arrives', async () => {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const data = await seen(
    recording(`
    await attempt('tcp', () => new Promise((resolve, reject) => {
      const socket = new (process.stdout.constructor as unknown as new () => import('node:net').Socket)();
      socket.on('error', reject).connect(${port}, '127.0.0.1', () => resolve('connected'));
    }));
  `),
  );
  assert.equal(data.tcp, 'ENETUNREACH');
  assert.equal(connections, 0);
});

test("files: the run reads its own copy of the checkout, not the operator's files", async () => {
  const secret = path.join(scratch, 'operator-key.pem');
  writeFileSync(secret, 'PRIVATE KEY', { mode: 0o600 });
  const data = await seen(
    recording(`
    await attempt('secret', () => fs.readFileSync(${JSON.stringify(secret)}, 'utf8'));
    await attempt('own', () => fs.readFileSync('.preview/main.ts', 'utf8').length > 0);
    await attempt('cwd', () => process.cwd());
  `),
  );
  assert.match(data.secret!, /ERR_ACCESS_DENIED|EACCES/);
  assert.equal(data.own, 'true');
  assert.doesNotMatch(data.cwd!, new RegExp(scratch), 'the run works in a private copy, not in the checkout cache');
});

test('descriptors: a run holds at most 128 (sockets pin kernel memory its resident-memory limit never sees)', async () => {
  const data = await seen(
    recording(`
    const held: number[] = [];
    await attempt('opened', () => {
      for (let i = 0; i < 1000; i++) held.push(fs.openSync('.preview/main.ts', 'r'));
      return held.length;
    });
    await attempt('held', () => held.length);
    for (const fd of held) fs.closeSync(fd);
  `),
  );
  assert.equal(data.opened, 'EMFILE');
  assert.ok(Number(data.held) > 50 && Number(data.held) < 128, `held ${data.held}`);
});

test('a rendering nested deeper than the limit is refused with a clear error, not a stack overflow', async () => {
  const main = `
    import { ApiObject, Chart } from 'cdk8s';
    export default function (chart: Chart): void {
      let nested: Record<string, unknown> = { leaf: true };
      for (let i = 0; i < 2000; i++) nested = { n: nested };
      new ApiObject(chart, 'deep', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' }, data: nested } as never);
    }
  `;
  const run = new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 15_000 }).run({
    checkoutDir: checkout(main),
    input: { namespace: 'x' },
  });
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof SandboxError);
    assert.equal(err.reason, 'bad-output');
    assert.match(err.message, /deep|nest/i);
    return true;
  });
});

test("a forged answer on stdout is only a log line; the harness's own answer counts", async () => {
  const forged = JSON.stringify({ ok: true, manifests: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'forged' } }] });
  const result = await new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 15_000 }).run({
    checkoutDir: checkout(`
      import { writeSync } from 'node:fs';
      export default function (): void { writeSync(1, ${JSON.stringify(`${forged}\n`)}); }
    `),
    input: { namespace: 'x' },
  });
  assert.deepEqual(result.manifests, []);
  assert.ok(result.logs.includes('"forged"'), 'what the code wrote to fd 1 is in the logs');
});

test("the renderer (the chart's production form) serves the same isolation over a Unix socket", async () => {
  const socketPath = path.join(scratch, 'renderer', 'renderer.sock');
  const server = await serveSandbox(new Sandbox<unknown>({ chartFactory, timeoutMs: 15_000 }), {
    socketPath,
    checkoutRoot: scratch,
    clientGid: process.getgid!(),
  });
  after(() => server.close());
  const remote = new RemoteSandbox<{ namespace: string }>(socketPath, 30_000);
  const result = await remote.run({
    checkoutDir: checkout(
      recording(`await attempt('kill', () => (process as unknown as { _kill(p: number, s: number): number })._kill(process.ppid, 9));`),
    ),
    input: { namespace: 'x' },
  });
  assert.equal((result.manifests[0]!.data as Record<string, string>).kill, '-1');
  const outsideRoot = mkdtempSync(path.join(tmpdir(), 'not-a-checkout-'));
  after(() => rmSync(outsideRoot, { recursive: true, force: true }));
  mkdirSync(path.join(outsideRoot, '.preview'));
  writeFileSync(path.join(outsideRoot, '.preview/main.ts'), 'export default function (): void {}\n');
  await assert.rejects(remote.run({ checkoutDir: outsideRoot, input: { namespace: 'x' } }), /not a checkout the renderer serves/);
});

test('where the isolation cannot be had, repository code does not run at all', async () => {
  // The same Sandbox in a process without the capabilities (root's uid, every capability dropped).
  const script = `
    import { Sandbox } from ${JSON.stringify(new URL('../../src/synth/sandbox.ts', import.meta.url).href)};
    const dir = ${JSON.stringify(checkout('export default function (): void { throw new Error("ran"); }\n'))};
    try { await new Sandbox({ chartFactory: ${JSON.stringify(chartFactory)} }).run({ checkoutDir: dir, input: {} }); console.log('ran'); }
    catch (err) { console.log(err.reason + ': ' + err.message); }
  `;
  const file = path.join(scratch, 'unprivileged.mts');
  writeFileSync(file, script, { mode: 0o644 });
  chmodSync(scratch, 0o711); // the unprivileged process may reach its script, not list the scratch
  const child = spawn('setpriv', ['--inh-caps=-all', '--bounding-set=-all', '--', process.execPath, '--import', 'tsx', file], {
    cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH },
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((resolve) => child.on('close', resolve));
  assert.match(
    out,
    /^isolation: \.preview\/main\.ts was not run: repository code runs only isolated by the kernel, and the operator lacks CAP_/m,
  );
});

test('Unix sockets reached by path: the run sees empty /tmp, /run and /dev/shm', async () => {
  const socketPath = path.join(tmpdir(), `sandbox-isolation-${process.pid}.sock`);
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  chmodSync(socketPath, 0o777); // anyone may connect, as to a careless daemon's socket
  after(() => server.close());
  const data = await seen(
    recording(`
    await attempt('unix', () => new Promise((resolve, reject) => {
      const socket = new (process.stdout.constructor as unknown as new () => import('node:net').Socket)();
      socket.on('error', reject).connect(${JSON.stringify(socketPath)}, () => resolve('connected'));
    }));
  `),
  );
  assert.equal(data.unix, 'ENOENT');
  assert.equal(connections, 0);
});

test('descriptors the operator inherited do not reach the run', async () => {
  const target = path.join(scratch, 'operator-log.txt');
  writeFileSync(target, '', { mode: 0o600 });
  const dir = checkout(recording(`await attempt('write', () => fs.writeSync(30, 'from the sandbox'));`));
  const script = path.join(scratch, 'inherited-fd.mts');
  writeFileSync(
    script,
    `
    import { Sandbox } from ${JSON.stringify(new URL('../../src/synth/sandbox.ts', import.meta.url).href)};
    const result = await new Sandbox({ chartFactory: ${JSON.stringify(chartFactory)} }).run({ checkoutDir: ${JSON.stringify(dir)}, input: { namespace: 'x' } });
    console.log(JSON.stringify(result.manifests[0].data));
  `,
  );
  // An operator started with fd 30 open on a file of its own (not close-on-exec), as a shell or supervisor may leave it.
  const child = spawn(
    'bash',
    ['-c', `exec 30>>${JSON.stringify(target)}; exec "$0" --import tsx ${JSON.stringify(script)}`, process.execPath],
    {
      cwd: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((resolve) => child.on('close', resolve));
  assert.deepEqual(JSON.parse(out.trim().split('\n').pop()!), { write: 'EBADF' });
  assert.equal(readFileSync(target, 'utf8'), '');
});

test('code that kills the compiler fails alone: the next run compiles', async () => {
  const dir = checkout('import data from "./data.ts";\nexport default function (): void { console.log(data); }\n');
  writeFileSync(path.join(dir, '.preview/data.ts'), `export default ${'['.repeat(300_000)}1${']'.repeat(300_000)};\n`);
  const sandbox = new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 15_000 });
  await assert.rejects(sandbox.run({ checkoutDir: dir, input: { namespace: 'x' } }), (err: unknown) => {
    assert.ok(err instanceof SandboxError);
    assert.equal(err.reason, 'compile');
    assert.match(err.message, /the compiler stopped on it/);
    return true;
  });
  const data = await seen(recording(`await attempt('ok', () => 'compiled');`));
  assert.equal(data.ok, 'compiled');
});

test('a flood of logs is stopped at the log budget', async () => {
  const main =
    'import { writeSync } from "node:fs";\nexport default function (): void { const chunk = "x".repeat(65536); for (;;) writeSync(1, chunk); }\n';
  await assert.rejects(
    new Sandbox<{ namespace: string }>({ chartFactory, timeoutMs: 15_000 }).run({ checkoutDir: checkout(main), input: { namespace: 'x' } }),
    (err: unknown) => err instanceof SandboxError && err.reason === 'bad-output' && /printed more than \d+ bytes of logs/.test(err.message),
  );
});

test('a checkout of too many directories is refused before it is copied whole', async () => {
  const dir = checkout('export default function (): void {}\n');
  for (let i = 0; i < 5_100; i++) mkdirSync(path.join(dir, 'deep', String(i)), { recursive: true });
  await assert.rejects(
    new Sandbox<{ namespace: string }>({ chartFactory }).run({ checkoutDir: dir, input: { namespace: 'x' } }),
    (err: unknown) => err instanceof SandboxError && /larger than the sandbox takes \(20000 files, 5000 directories/.test(err.message),
  );
});
