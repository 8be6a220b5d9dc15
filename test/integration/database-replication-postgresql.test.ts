// PostgreSQL replication with real servers: the client authentication, settings and scripts the
// Database renderer puts in its ConfigMap and StatefulSets, taken from the rendered objects and run
// with Debian's PostgreSQL on 127.0.0.1 as the `postgres` user. The primary is initialised as the
// official image's entrypoint does it (initdb, a socket-only temporary server that runs the
// primary's initdb scripts, then the server with the container's arguments); the replica by its
// init container's command; it must turn ready by its own readiness probe, and a row written on
// the primary must be read on the replica, which refuses writes. What stands in for Kubernetes:
// the ConfigMap and the data volume are directories, and the replica reaches the primary at
// 127.0.0.1:<port> instead of <name>-0.<name>-headless:5432.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { renderDatabaseWorkloads, replicationConfigPath, type DatabaseResource, type Manifest } from '../../constructs/index.js';
import { generatePassword, renderCredentialsSecret } from '../../src/controllers/credentials-secret.js';
import { freePort, ownForServers, postgresqlMajor, run, startServer, type LocalServer } from '../support/local-postgresql.js';

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string; optional?: boolean } } };
type Container = { command?: string[]; args?: string[]; env: EnvVar[]; readinessProbe: { exec: { command: string[] } } };

const database: DatabaseResource = {
  apiVersion: 'mycompany.com/v1',
  kind: 'Database',
  metadata: { name: 'myapp-db', namespace: 'team-a', uid: '0b6c7d8e-0000-4000-8000-000000000002' },
  // The seed's, at the version of the servers run here (the settings differ by major version).
  spec: { engine: 'postgresql', version: String(postgresqlMajor()), storage: '100Gi', replicas: 2 },
};

function find(objects: Manifest[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found;
}

/** A container's environment as the kubelet resolves it from the Secret (an optional key that is missing stays unset). */
function resolveEnv(container: Container, secret: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = { LANG: 'C' };
  for (const v of container.env) {
    const ref = v.valueFrom?.secretKeyRef;
    if (ref && secret[ref.key] === undefined && !ref.optional) throw new Error(`Secret key ${ref.key} missing`);
    const value = ref ? secret[ref.key] : v.value;
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}

describe('PostgreSQL replication, as rendered, with real servers', { timeout: 180_000 }, () => {
  const objects = renderDatabaseWorkloads(database);
  const secret = renderCredentialsSecret(database, generatePassword(), generatePassword()).stringData as Record<string, string>;
  const primaryPod = find(objects, 'StatefulSet', 'myapp-db').spec.template.spec;
  const replicaPod = find(objects, 'StatefulSet', 'myapp-db-replica').spec.template.spec;
  const primaryContainer: Container = primaryPod.containers[0];
  const replicaContainer: Container = replicaPod.containers[0];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-replication-'));
  const configDir = path.join(dir, 'config');
  const socketDir = path.join(dir, 'run');
  /** A rendered path or argument, with the ConfigMap's mount and the data volume where this test keeps them. */
  const mounted = (volume: string) => (text: string) =>
    text.replaceAll(replicationConfigPath, configDir).replaceAll('/var/lib/postgresql', volume);
  const servers: LocalServer[] = [];
  let primary: LocalServer;

  before(async () => {
    for (const d of [configDir, socketDir, path.join(dir, 'primary'), path.join(dir, 'replica')]) mkdirSync(d);
    for (const [key, text] of Object.entries(find(objects, 'ConfigMap', 'myapp-db-replication').data as Record<string, string>)) {
      writeFileSync(path.join(configDir, key), text);
    }
    writeFileSync(path.join(dir, 'pwfile'), `${secret.password}\n`);
    ownForServers(dir, configDir, socketDir, path.join(dir, 'primary'), path.join(dir, 'replica'), path.join(dir, 'pwfile'));
    primary = await initialisePrimary();
  });

  after(async () => {
    for (const server of servers.reverse()) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The official image's entrypoint on an empty data directory, then its server. */
  async function initialisePrimary(): Promise<LocalServer> {
    const mount = mounted(path.join(dir, 'primary'));
    const resolved = resolveEnv(primaryContainer, secret);
    const env: Record<string, string> = { ...resolved, PGDATA: mount(resolved.PGDATA!) };
    const init = await run('initdb', [`--username=${env.POSTGRES_USER}`, `--pwfile=${path.join(dir, 'pwfile')}`, '-D', env.PGDATA!], env);
    assert.equal(init.code, 0, init.stderr);
    const args = (primaryContainer.args ?? []).map(mount);
    const port = await freePort();
    const temporary = await startServer(env.PGDATA!, args, { port, socketDir, listen: '' });
    try {
      // As the entrypoint's docker_setup_db: the application's database, then the initdb scripts.
      const socket = { ...env, PGHOST: socketDir, PGPORT: String(port) };
      const created = await run(
        'psql',
        [
          '--no-psqlrc',
          '-v',
          'ON_ERROR_STOP=1',
          '--username',
          env.POSTGRES_USER!,
          '--dbname',
          'postgres',
          '-c',
          `CREATE DATABASE "${env.POSTGRES_DB}"`,
        ],
        socket,
      );
      assert.equal(created.code, 0, created.stderr);
      const scripts = primaryPod.volumes.find((v: { name: string }) => v.name === 'initdb').configMap.items as { key: string }[];
      assert.deepEqual(
        scripts.map((s) => s.key),
        ['postgresql-primary-init.sh'],
      );
      for (const { key } of scripts) {
        // The entrypoint (bash) sources each *.sh; its temporary server is on the default socket, here ours.
        const sourced = await run('bash', ['-c', '. "$1"', 'initdb', path.join(configDir, key)], socket);
        assert.equal(sourced.code, 0, sourced.stderr);
      }
    } finally {
      await temporary.stop();
    }
    const server = await startServer(env.PGDATA!, args, { port: await freePort(), socketDir, listen: '127.0.0.1' });
    servers.push(server);
    return server;
  }

  /** psql over TCP as the application's user, with its password (the rendered pg_hba.conf asks for it). */
  function sql(server: LocalServer, query: string) {
    const conninfo = `host=127.0.0.1 port=${server.port} user=${secret.username} dbname=${secret.database}`;
    return run('psql', ['--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '-Atc', query, conninfo], { PGPASSWORD: secret.password!, LANG: 'C' });
  }

  it('initialises a replica from the primary, streams a row to it, and the replica refuses writes', async () => {
    const mount = mounted(path.join(dir, 'replica'));
    const resolved = resolveEnv(replicaContainer, secret);
    const env = { ...resolved, PGDATA: mount(resolved.PGDATA!), PRIMARY_HOST: '127.0.0.1', PRIMARY_PORT: String(primary.port) };
    assert.equal(resolved.PRIMARY_HOST, 'myapp-db-0.myapp-db-headless');
    const [initContainer] = replicaPod.initContainers as Container[];
    const [command, ...args] = initContainer!.command!.map(mount);
    const init = await run(command!, args, env, 120_000);
    assert.equal(init.code, 0, `${init.stdout}\n${init.stderr}`);
    assert.match(init.stdout, /base backup from 127\.0\.0\.1:\d+ as replicator/);
    // Idempotent: a pod restarted on its volume keeps its data.
    const again = await run(command!, args, env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /holds a server/);

    const replica = await startServer(env.PGDATA, (replicaContainer.args ?? []).map(mount), {
      port: await freePort(),
      socketDir,
      listen: '127.0.0.1',
    });
    servers.push(replica);
    const [probe, ...probeArgs] = replicaContainer.readinessProbe.exec.command.map(mount);
    await until(
      'the replica is ready (streaming)',
      async () => (await run(probe!, probeArgs, { ...env, PGPORT: String(replica.port) })).code === 0,
    );

    const streaming = await sql(primary, 'SELECT usename, state FROM pg_stat_replication');
    assert.equal(streaming.stdout.trim(), 'replicator|streaming', streaming.stderr);
    const wrote = await sql(
      primary,
      "CREATE TABLE orders (id int PRIMARY KEY, item text); INSERT INTO orders VALUES (1, 'written on the primary')",
    );
    assert.equal(wrote.code, 0, wrote.stderr);
    await until(
      'the row is on the replica',
      async () => (await sql(replica, 'SELECT item FROM orders WHERE id = 1')).stdout.trim() === 'written on the primary',
    );

    const refused = await sql(replica, "INSERT INTO orders VALUES (2, 'written on a replica')");
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /read-only transaction/);
    assert.equal((await sql(replica, 'SELECT pg_is_in_recovery()')).stdout.trim(), 't');
  });

  it('leaves a fresh replica unready until it streams', async () => {
    // The replica's probe on the primary (not in recovery, no WAL receiver) fails: readiness means streaming.
    const mount = mounted(path.join(dir, 'primary'));
    const [probe, ...probeArgs] = replicaContainer.readinessProbe.exec.command.map(mount);
    const env: Record<string, string> = { ...resolveEnv(replicaContainer, secret), PGPORT: String(primary.port) };
    assert.notEqual((await run(probe!, probeArgs, env)).code, 0);
  });

  it('reads the rendered pg_hba.conf without error: replication with a password from outside the pod', async () => {
    // Connections from 127.0.0.1 are trusted (inside a pod, only the pod itself); the password
    // rules are the ones that apply to the replicas and clients of a cluster.
    const rules = await sql(primary, 'SELECT type, database, user_name, address, auth_method, error FROM pg_hba_file_rules');
    assert.equal(rules.code, 0, rules.stderr);
    const lines = rules.stdout.trim().split('\n');
    assert.ok(
      lines.every((l) => l.endsWith('|')),
      `a rule has an error: ${rules.stdout}`,
    );
    assert.ok(lines.includes('host|{replication}|{all}|all|scram-sha-256|'), rules.stdout);
    assert.ok(lines.includes('host|{all}|{all}|all|scram-sha-256|'), rules.stdout);
  });
});

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting until ${what}`);
}
