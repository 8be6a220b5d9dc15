// MySQL GTID replication for the official image (8.0.23 or later), pure: the settings and the
// scripts the Database's replication ConfigMap holds.
//
// A replica is not copied from the primary: it initialises an empty server of its own (the image's
// entrypoint, without the application's database and user), forgets its own GTIDs and, on its
// first real start, fetches every transaction of the primary from the first one (auto-position):
// the application's database and user arrive by replication like any later write. That needs the
// primary's binary log from its start (binlog_expire_logs_seconds, 30 days by default), which a
// preview's database has; a replica added later than that stays unready and says why in its log.
// No MySQL server runs in this project's tests (Debian ships MariaDB, whose GTIDs, options and
// statements differ): test/integration/database-replication-mysql.test.ts runs these scripts'
// shell with the entrypoint's SQL function recorded, and nothing more.
import { replicationConfigPath, replicationEnv, type EngineReplication, type ReplicationInput } from './database-replication.js';

/** The ConfigMap keys of MySQL's replication files. */
export const mysqlReplicationFiles = {
  primaryInit: 'mysql-primary-init.sh',
  replicaInit: 'mysql-replica-init.sh',
  replicaReady: 'mysql-replica-ready.sh',
} as const;

// Sourced by the image's entrypoint once, on an empty data directory (docker_process_sql is its
// function: the temporary server, as root). Binary-logged, so replicas get the user too.
const primaryInit = `# The user replicas connect as. Without replication credentials (a credentials Secret written
# before replication existed) replicas connect as root instead.
if [ -n "\${REPLICATION_USER:-}" ] && [ -n "\${REPLICATION_PASSWORD:-}" ]; then
  docker_process_sql --database=mysql <<SQL
CREATE USER '$REPLICATION_USER'@'%' IDENTIFIED BY '$REPLICATION_PASSWORD';
GRANT REPLICATION SLAVE ON *.* TO '$REPLICATION_USER'@'%';
SQL
fi
`;

// Sourced the same way on a replica. The credentials are [A-Za-z0-9] (credentials-secret.ts), so
// they need no quoting inside the SQL.
const replicaInit = `# This server becomes a GTID replica of the primary: it forgets its own GTIDs, so that it
# fetches every transaction of the primary from the first; then it is read-only for all but
# replication. server_id: 1 is the primary, replica ordinal k is k + 2.
user="\${REPLICATION_USER:-root}"
password="\${REPLICATION_PASSWORD:-$MYSQL_ROOT_PASSWORD}"
ordinal="\${HOSTNAME##*-}"
case "$(docker_process_sql --skip-column-names --batch --execute='SELECT VERSION()')" in
  8.0.*|8.1.*) reset='RESET MASTER' ;;
  *) reset='RESET BINARY LOGS AND GTIDS' ;;
esac
docker_process_sql <<SQL
$reset;
CHANGE REPLICATION SOURCE TO SOURCE_HOST='$PRIMARY_HOST', SOURCE_PORT=$PRIMARY_PORT,
  SOURCE_USER='$user', SOURCE_PASSWORD='$password', SOURCE_AUTO_POSITION=1, SOURCE_SSL=1;
SET PERSIST server_id = $((ordinal + 2));
SET PERSIST super_read_only = ON;
SQL
`;

// Ready when both replication threads run: connected to the primary and applying.
const replicaReady = `#!/bin/sh
running="$(MYSQL_PWD="$MYSQL_ROOT_PASSWORD" mysql -uroot -h127.0.0.1 -P3306 --skip-column-names --batch --execute="
  SELECT COUNT(*) FROM performance_schema.replication_connection_status c
  JOIN performance_schema.replication_applier_status a USING (CHANNEL_NAME)
  WHERE c.SERVICE_STATE = 'ON' AND a.SERVICE_STATE = 'ON'")"
[ "$running" = 1 ]
`;

// GTIDs and a binary log under a fixed name (8.0 logs by default, under the host name otherwise).
const gtidArgs = ['--gtid-mode=ON', '--enforce-gtid-consistency=ON', '--log-bin=binlog'];

/** MySQL's replication: GTID auto-positioned replicas, read-only. */
export function mysqlReplication(input: ReplicationInput): EngineReplication {
  const files = mysqlReplicationFiles;
  return {
    files: { [files.primaryInit]: primaryInit, [files.replicaInit]: replicaInit, [files.replicaReady]: replicaReady },
    primary: {
      args: ['--server-id=1', ...gtidArgs],
      env: replicationEnv(input, 'primary'),
      applicationCredentials: true,
      initdbScripts: [files.primaryInit],
    },
    replica: {
      // Not read-only from the start: the entrypoint's own initialisation writes (the root user).
      args: gtidArgs,
      env: replicationEnv(input, 'replica'),
      applicationCredentials: false,
      initdbScripts: [files.replicaInit],
      readinessCommand: ['sh', `${replicationConfigPath}/${files.replicaReady}`],
    },
  };
}
