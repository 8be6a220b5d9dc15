// MySQL replication, as far as it can be run here: no MySQL server is packaged by Debian (its
// MariaDB has other GTIDs, options and statements: it refuses --gtid-mode, SET PERSIST and CHANGE
// REPLICATION SOURCE), so the scripts the Database renderer puts in its ConfigMap run for real in
// bash, as the official image's entrypoint runs them, with the entrypoint's docker_process_sql and
// the mysql client replaced by recorders. What this proves: the scripts parse, read the environment
// the StatefulSets give them, and send the statements below. What it does not: that MySQL accepts
// those statements and replicates (see docs/repository-config.md).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import { renderDatabaseWorkloads, type DatabaseResource, type Manifest } from '../../constructs/index.js';
import { renderCredentialsSecret } from '../../src/controllers/credentials-secret.js';

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string } } };

const database: DatabaseResource = {
  apiVersion: 'mycompany.com/v1',
  kind: 'Database',
  metadata: { name: 'orders', namespace: 'team-a', uid: 'uid-1' },
  spec: { engine: 'mysql', version: '8.4', storage: '10Gi', replicas: 3 },
};
const password = 'P'.repeat(40);
const replicationPassword = 'R'.repeat(40);
const secret = renderCredentialsSecret(database, password, replicationPassword).stringData as Record<string, string>;
/** A Secret from before replication: no replication keys. */
const { 'replication-username': _u, 'replication-password': _p, ...legacySecret } = secret;

function find(objects: Manifest[], kind: string, name: string): any {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `no ${kind} ${name}`);
  return found;
}

function resolveEnv(env: EnvVar[], data: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of env) {
    const value = v.valueFrom?.secretKeyRef ? data[v.valueFrom.secretKeyRef.key] : v.value;
    if (value !== undefined) out[v.name] = value;
  }
  return out;
}

describe('MySQL replication scripts, as rendered', () => {
  const objects = renderDatabaseWorkloads(database);
  const files = find(objects, 'ConfigMap', 'orders-replication').data as Record<string, string>;
  const primary = find(objects, 'StatefulSet', 'orders').spec.template.spec;
  const replica = find(objects, 'StatefulSet', 'orders-replica').spec.template.spec;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mysql-replication-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [key, text] of Object.entries(files)) writeFileSync(path.join(dir, key), text);

  /**
   * Sources `script` in bash as the entrypoint does, its docker_process_sql recording what it is
   * sent (and answering `SELECT VERSION()` with `version`). Returns the statements sent.
   */
  async function source(script: string, env: Record<string, string>, version = '8.4.3'): Promise<string> {
    const log = path.join(dir, `sql-${Math.random().toString(36).slice(2)}.log`);
    const shim = `set -eo pipefail
docker_process_sql() {
  case "$*" in *--execute=*) echo "${version}"; return ;; esac
  { echo "-- docker_process_sql $*"; cat; } >> "${log}"
}
. "$1"`;
    await promisify(execFile)('bash', ['-c', shim, 'entrypoint', path.join(dir, script)], { env: { ...env, PATH: '/usr/bin:/bin' } });
    try {
      return readFileSync(log, 'utf8');
    } catch {
      return '';
    }
  }

  it('parses: every script passes bash -n', async () => {
    for (const key of Object.keys(files)) await promisify(execFile)('bash', ['-n', path.join(dir, key)]);
    assert.deepEqual(Object.keys(files).sort(), ['mysql-primary-init.sh', 'mysql-replica-init.sh', 'mysql-replica-ready.sh']);
  });

  it('gives the primary server id 1, GTIDs and a binary log, and creates the replication user once', async () => {
    const container = primary.containers[0];
    assert.deepEqual(container.args, [
      '--datadir=/var/lib/mysql/data',
      '--server-id=1',
      '--gtid-mode=ON',
      '--enforce-gtid-consistency=ON',
      '--log-bin=binlog',
    ]);
    const items = primary.volumes.find((v: { name: string }) => v.name === 'initdb').configMap.items;
    assert.deepEqual(items, [{ key: 'mysql-primary-init.sh', path: 'mysql-primary-init.sh' }]);
    const sent = await source('mysql-primary-init.sh', resolveEnv(container.env, secret));
    assert.equal(
      sent,
      `-- docker_process_sql --database=mysql
CREATE USER 'replicator'@'%' IDENTIFIED BY '${replicationPassword}';
GRANT REPLICATION SLAVE ON *.* TO 'replicator'@'%';
`,
    );
    assert.equal(await source('mysql-primary-init.sh', resolveEnv(container.env, legacySecret)), '', 'no user without credentials');
  });

  it('makes a replica forget its GTIDs, follow the primary by auto-position and turn read-only', async () => {
    const container = replica.containers[0];
    const env = resolveEnv(container.env, secret);
    assert.deepEqual(Object.keys(env), ['MYSQL_ROOT_PASSWORD', 'REPLICATION_USER', 'REPLICATION_PASSWORD', 'PRIMARY_HOST', 'PRIMARY_PORT']);
    assert.deepEqual(container.args, [
      '--datadir=/var/lib/mysql/data',
      '--gtid-mode=ON',
      '--enforce-gtid-consistency=ON',
      '--log-bin=binlog',
    ]);
    const sent = await source('mysql-replica-init.sh', { ...env, HOSTNAME: 'orders-replica-1' });
    assert.equal(
      sent,
      `-- docker_process_sql 
RESET BINARY LOGS AND GTIDS;
CHANGE REPLICATION SOURCE TO SOURCE_HOST='orders-0.orders-headless', SOURCE_PORT=3306,
  SOURCE_USER='replicator', SOURCE_PASSWORD='${replicationPassword}', SOURCE_AUTO_POSITION=1, SOURCE_SSL=1;
SET PERSIST server_id = 3;
SET PERSIST super_read_only = ON;
`,
    );
  });

  it('uses RESET MASTER on 8.0 and root where the Secret predates replication', async () => {
    const env = { ...resolveEnv(replica.containers[0].env, legacySecret), HOSTNAME: 'orders-replica-0' };
    const sent = await source('mysql-replica-init.sh', env, '8.0.39');
    assert.match(sent, /^RESET MASTER;$/m);
    assert.match(sent, new RegExp(`SOURCE_USER='root', SOURCE_PASSWORD='${password}'`));
    assert.match(sent, /server_id = 2;/);
  });

  it('is ready only while both replication threads run', async () => {
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    // The mysql client's stand-in answers what the file `answer` says and records its query.
    writeFileSync(
      path.join(bin, 'mysql'),
      `#!/bin/sh\nprintf '%s\\n' "$*" > "${dir}/query"\necho "$MYSQL_PWD" > "${dir}/pwd"\ncat "${dir}/answer"\n`,
    );
    chmodSync(path.join(bin, 'mysql'), 0o755);
    const [sh, script] = replica.containers[0].readinessProbe.exec.command;
    const probe = (answer: string) => {
      writeFileSync(path.join(dir, 'answer'), `${answer}\n`);
      const env = { ...resolveEnv(replica.containers[0].env, secret), PATH: `${bin}:/usr/bin:/bin` };
      return promisify(execFile)(sh, [script.replace('/etc/preview-replication', dir)], { env }).then(
        () => true,
        () => false,
      );
    };
    assert.equal(await probe('1'), true);
    assert.equal(await probe('0'), false);
    assert.match(readFileSync(path.join(dir, 'query'), 'utf8'), /replication_connection_status[\s\S]*replication_applier_status/);
    assert.equal(readFileSync(path.join(dir, 'pwd'), 'utf8').trim(), password);
  });
});
