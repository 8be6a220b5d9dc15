// PostgreSQL streaming replication for the official image, pure: the settings, the client
// authentication file and the scripts, as the Database's replication ConfigMap holds them.
// test/integration/database-replication-postgresql.test.ts runs exactly these with Debian's
// PostgreSQL: a primary, a replica initialised by the replica script, a row written on one and
// read on the other.
import {
  majorVersion,
  replicationConfigPath,
  replicationEnv,
  type EngineReplication,
  type ReplicationInput,
} from './database-replication.js';

/** The ConfigMap keys of PostgreSQL's replication files. */
export const postgresqlReplicationFiles = {
  hba: 'pg_hba.conf',
  primaryInit: 'postgresql-primary-init.sh',
  replicaInit: 'postgresql-replica-init.sh',
  replicaReady: 'postgresql-replica-ready.sh',
} as const;

/**
 * The client authentication of every server, primary or replica: the official image's own rules
 * (trust inside the pod, a password from anywhere else) plus replication connections with a
 * password. A file of ours rather than the one initdb writes into the data directory, so that a
 * primary initialised before replication existed accepts replicas after its next start.
 */
function hbaFile(version: string): string {
  // The image stores passwords as SCRAM from 14 on, as MD5 before; `md5` accepts both.
  const method = majorVersion(version) >= 14 ? 'scram-sha-256' : 'md5';
  return [
    '# TYPE  DATABASE     USER  ADDRESS       METHOD',
    'local   all          all                 trust',
    'host    all          all   127.0.0.1/32  trust',
    'host    all          all   ::1/128       trust',
    'local   replication  all                 trust',
    'host    replication  all   127.0.0.1/32  trust',
    'host    replication  all   ::1/128       trust',
    `host    replication  all   all           ${method}`,
    `host    all          all   all           ${method}`,
    '',
  ].join('\n');
}

// Sourced by the image's entrypoint once, on an empty data directory, while its temporary
// server listens on the socket only.
const primaryInit = `# The role replicas stream as. Without replication credentials (a credentials Secret written
# before replication existed) replicas use the administrator instead.
if [ -n "\${REPLICATION_USER:-}" ] && [ -n "\${REPLICATION_PASSWORD:-}" ]; then
  psql -v ON_ERROR_STOP=1 --no-psqlrc --username "$POSTGRES_USER" --dbname postgres \\
    --set user="$REPLICATION_USER" --set password="$REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE :"user" WITH LOGIN REPLICATION PASSWORD :'password';
SQL
fi
`;

// The init container of a replica, before its server starts.
const replicaInit = `#!/bin/sh
# A replica whose data directory is empty becomes a copy of the primary: a base backup taken
# over the replication protocol, with -R so that it starts as a standby streaming from there.
# The backup lands beside the data directory and is renamed into place only when complete, so
# a pod stopped half-way starts over. A data directory that exists is left as it is.
set -eu
if [ -s "$PGDATA/PG_VERSION" ]; then
  echo "replica: $PGDATA holds a server, starting it"
  exit 0
fi
user="\${REPLICATION_USER:-$POSTGRES_USER}"
PGPASSWORD="\${REPLICATION_PASSWORD:-$POSTGRES_PASSWORD}"
export PGPASSWORD
until pg_isready -q -h "$PRIMARY_HOST" -p "$PRIMARY_PORT"; do
  echo "replica: waiting for the primary at $PRIMARY_HOST:$PRIMARY_PORT"
  sleep 2
done
staging="$PGDATA.partial"
rm -rf "$staging"
echo "replica: base backup from $PRIMARY_HOST:$PRIMARY_PORT as $user"
pg_basebackup --host="$PRIMARY_HOST" --port="$PRIMARY_PORT" --username="$user" --no-password \\
  --pgdata="$staging" --write-recovery-conf --wal-method=stream --checkpoint=fast
if [ -d "$PGDATA" ]; then rmdir "$PGDATA"; fi
mv "$staging" "$PGDATA"
echo "replica: initialised from the primary"
`;

// A replica is ready when it streams from the primary, not merely when it accepts connections.
const replicaReady = `#!/bin/sh
status="$(psql --no-psqlrc -h 127.0.0.1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -Atc 'SELECT status FROM pg_stat_wal_receiver')"
[ "$status" = streaming ]
`;

/** The server settings replication needs beyond the image's defaults (wal_level replica, 10 WAL senders, hot standby). */
function serverArgs(version: string): string[] {
  // WAL kept for a replica that was away for a moment; no replication slots, which a replica
  // removed by a scale-down would leave behind, holding WAL until the disk fills.
  const keep = majorVersion(version) >= 13 ? 'wal_keep_size=256MB' : 'wal_keep_segments=16';
  return ['-c', `hba_file=${replicationConfigPath}/${postgresqlReplicationFiles.hba}`, '-c', keep];
}

/** PostgreSQL's replication: streaming replicas initialised with pg_basebackup -R. */
export function postgresqlReplication(input: ReplicationInput): EngineReplication {
  const files = postgresqlReplicationFiles;
  const args = serverArgs(input.version);
  return {
    files: {
      [files.hba]: hbaFile(input.version),
      [files.primaryInit]: primaryInit,
      [files.replicaInit]: replicaInit,
      [files.replicaReady]: replicaReady,
    },
    primary: { args, env: replicationEnv(input, 'primary'), applicationCredentials: true, initdbScripts: [files.primaryInit] },
    replica: {
      args,
      env: replicationEnv(input, 'replica'),
      applicationCredentials: true,
      initdbScripts: [],
      initCommand: ['sh', `${replicationConfigPath}/${files.replicaInit}`],
      readinessCommand: ['sh', `${replicationConfigPath}/${files.replicaReady}`],
    },
  };
}
