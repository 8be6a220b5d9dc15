// A Database's credentials Secret holds a random password, so it is created exactly once and
// never rendered again: not part of any applied set (apply and prune never see it), written
// with a create (never an apply or update), owned by the Database through its uid so that it
// goes with it. If it already exists, whoever made it wins; we never rewrite it.
import { randomInt } from 'node:crypto';
import {
  databaseEndpoint,
  databaseLabel,
  databaseObjectNames,
  databasePort,
  replicationSecretKeys,
  replicationUsername,
  type DatabaseResource,
} from '../../constructs/index.js';
import { ConflictError, controllerReference, type KubeObject, type ObjectClient } from '../kube/index.js';

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Default password length: 40 characters of [A-Za-z0-9], about 238 bits. */
export const defaultPasswordLength = 40;

/**
 * A password of `length` (at least 32) characters drawn uniformly from [A-Za-z0-9] with the
 * CSPRNG. Alphanumeric only, so it needs no escaping in a URI, a shell or a config file.
 */
export function generatePassword(length = defaultPasswordLength): string {
  if (!Number.isInteger(length) || length < 32) throw new Error(`a database password must have at least 32 characters, not ${length}`);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** The database and user name an engine accepts: the resource name with `-` as `_`. */
export function databaseIdentifier(name: string): string {
  return name.replace(/-/g, '_');
}

/**
 * The Secret `<name>-credentials` of a Database, with the given passwords: the application's and
 * the one replicas authenticate with (written whatever the replica count, so scaling up later
 * needs no new Secret). Pure.
 */
export function renderCredentialsSecret(database: DatabaseResource, password: string, replicationPassword: string): KubeObject {
  const name = database.metadata.name;
  const namespace = database.metadata.namespace!;
  const engine = database.spec.engine;
  const host = databaseEndpoint(name, namespace);
  const port = databasePort(engine);
  const dbName = databaseIdentifier(name);
  // MySQL user names are limited to 32 characters.
  const username = engine === 'mysql' ? dbName.slice(0, 32) : dbName;
  const scheme = engine === 'postgresql' ? 'postgresql' : 'mysql';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: databaseObjectNames(name).credentialsSecret,
      namespace,
      labels: {
        'app.kubernetes.io/instance': name,
        'app.kubernetes.io/component': 'database',
        'app.kubernetes.io/managed-by': 'preview-operator',
        [databaseLabel]: name,
      },
      ownerReferences: [controllerReference(database)],
    },
    type: 'Opaque',
    immutable: true,
    stringData: {
      username,
      password,
      database: dbName,
      host,
      port: String(port),
      uri: `${scheme}://${encodeURIComponent(username)}:${encodeURIComponent(password)}@${host}:${port}/${dbName}`,
      [replicationSecretKeys.username]: replicationUsername,
      [replicationSecretKeys.password]: replicationPassword,
    },
  };
}

/**
 * Creates the credentials Secret if it does not exist. `existing` is what the cache holds;
 * a create that finds the Secret already there (a stale cache, another replica) is fine.
 * Returns true if this call created it.
 */
export async function ensureCredentialsSecret(
  client: ObjectClient,
  database: DatabaseResource,
  existing: KubeObject | undefined,
): Promise<boolean> {
  if (existing && !existing.metadata.deletionTimestamp) return false;
  try {
    await client.create(renderCredentialsSecret(database, generatePassword(), generatePassword()));
    return true;
  } catch (err) {
    if (err instanceof ConflictError && err.alreadyExists) return false;
    throw err;
  }
}
