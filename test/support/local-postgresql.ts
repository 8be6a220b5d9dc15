// Debian's PostgreSQL servers on 127.0.0.1 for tests: the binaries, run as the `postgres` user
// (the server refuses root), a free port each, a socket directory of their own.
import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';

/** The newest Debian PostgreSQL's bin directory (`apt-get install postgresql`; `.ci/run` does). */
export function postgresqlBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  if (majors.length === 0) throw new Error(`no PostgreSQL under ${root}: install Debian's postgresql package`);
  return `${root}/${majors[0]}/bin`;
}

/** The major version of the installed PostgreSQL. */
export function postgresqlMajor(): number {
  return Number(postgresqlBinDir().split('/').at(-2));
}

function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('running as root needs the postgres user (the server refuses root)');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** Gives `paths` to the user the servers run as (when the test runs as root). */
export function ownForServers(...paths: string[]): void {
  const user = serverUser();
  if (user) for (const p of paths) chownSync(p, user.uid, user.gid);
}

/** The command line that runs `command` as the servers' user: setpriv from root, as it is otherwise. */
export function asServerUser(command: string, args: readonly string[]): [string, string[]] {
  const user = serverUser();
  if (!user) return [command, [...args]];
  return ['setpriv', ['--reuid', String(user.uid), '--regid', String(user.gid), '--clear-groups', '--', command, ...args]];
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command as the servers' user with exactly `env` (plus the PostgreSQL binaries on PATH); bounded by `timeoutMs`. */
export function run(command: string, args: readonly string[], env: Record<string, string>, timeoutMs = 60_000): Promise<Ran> {
  const [cmd, argv] = asServerUser(command, args);
  const child = spawn(cmd, argv, { env: withPath(env), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, cwd: '/' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function withPath(env: Record<string, string>): Record<string, string> {
  return { ...env, PATH: `${postgresqlBinDir()}:/usr/bin:/bin` };
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A running `postgres`; `stop()` shuts it down fast and waits. */
export interface LocalServer {
  readonly port: number;
  readonly process: ChildProcess;
  readonly log: () => string;
  stop(): Promise<void>;
}

/**
 * Starts `postgres -D dataDir` with `args` (what a pod's container passes), listening on
 * `listen` ('' for the socket only, as the image's temporary server) at `port`, its socket in
 * `socketDir`; resolves once pg_isready answers on the socket.
 */
export async function startServer(
  dataDir: string,
  args: readonly string[],
  opts: { port: number; socketDir: string; listen: string },
): Promise<LocalServer> {
  const argv = ['-D', dataDir, ...args, '-c', `listen_addresses=${opts.listen}`, '-p', String(opts.port), '-k', opts.socketDir];
  const [cmd, full] = asServerUser(`${postgresqlBinDir()}/postgres`, argv);
  const child = spawn(cmd, full, { env: withPath({ LANG: 'C' }), stdio: ['ignore', 'pipe', 'pipe'], cwd: '/' });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const server: LocalServer = {
    port: opts.port,
    process: child,
    log: () => log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`postgres exited with ${child.exitCode}:\n${log}`);
    const ready = await run('pg_isready', ['-q', '-h', opts.socketDir, '-p', String(opts.port)], {}, 5_000);
    if (ready.code === 0) return server;
    await new Promise((r) => setTimeout(r, 200));
  }
  await server.stop();
  throw new Error(`postgres did not answer within 30 s:\n${log}`);
}
