// One kubeconfig file, read the lean way: the fields of a token or client-certificate kubeconfig
// (server, certificate authority, TLS server name, token, tokenFile, client certificate and key,
// namespace), with relative paths resolved against the file's directory as client-go resolves
// them. Entries that need more (exec plugins, auth providers, basic auth, impersonation,
// proxy-url) are only flagged: @kubernetes/client-node reads those kubeconfigs itself.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { KubeConfigError } from './kube-config-error.js';

export interface KubeConfigCluster {
  name: string;
  server?: string;
  certificateAuthority?: string;
  /** Base64, as written. */
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  /** It sets proxy-url. */
  needsClientNode: boolean;
}

export interface KubeConfigUser {
  name: string;
  token?: string;
  tokenFile?: string;
  clientCertificate?: string;
  /** Base64, as written. */
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  /** It sets exec, auth-provider, username/password or an impersonation field. */
  needsClientNode: boolean;
}

export interface KubeConfigContext {
  name: string;
  cluster?: string;
  user?: string;
  namespace?: string;
}

export interface KubeConfigDocument {
  file: string;
  clusters: Map<string, KubeConfigCluster>;
  users: Map<string, KubeConfigUser>;
  contexts: Map<string, KubeConfigContext>;
  currentContext?: string;
}

/** The fields the lean reader leaves to client-node. */
const clientNodeClusterFields = ['proxy-url'];
const clientNodeUserFields = ['exec', 'auth-provider', 'username', 'password', 'as', 'as-uid', 'as-groups', 'as-user-extra'];

/** `insecure-skip-tls-verify: yes` is a boolean to client-go's YAML 1.1 parser, so it is one here too. */
const trueWords = new Set(['true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON']);
const falseWords = new Set(['false', 'False', 'FALSE', 'no', 'No', 'NO', 'n', 'N', 'off', 'Off', 'OFF']);
/** Scalars that mean "not set" (kubectl writes `users: null` for an empty list). */
const nullWords = new Set(['', '~', 'null', 'Null', 'NULL']);

/** Reads typed fields of one YAML mapping, naming the entry and field in every complaint. */
class Fields {
  constructor(
    private readonly value: Record<string, unknown>,
    private readonly where: string,
  ) {}

  static of(value: unknown, where: string): Fields {
    if (isAbsent(value)) return new Fields({}, where);
    if (typeof value !== 'object' || Array.isArray(value)) throw new KubeConfigError(`${where}: must be a mapping`);
    return new Fields(value as Record<string, unknown>, where);
  }

  string(key: string): string | undefined {
    const v = this.value[key];
    if (isAbsent(v)) return undefined;
    if (typeof v !== 'string') throw new KubeConfigError(`${this.where}: ${key} must be a string`);
    return v;
  }

  boolean(key: string): boolean {
    const v = this.string(key);
    if (v === undefined || falseWords.has(v)) return false;
    if (trueWords.has(v)) return true;
    throw new KubeConfigError(`${this.where}: ${key} must be true or false, not "${v}"`);
  }

  list(key: string): unknown[] {
    const v = this.value[key];
    if (isAbsent(v)) return [];
    if (!Array.isArray(v)) throw new KubeConfigError(`${this.where}: ${key} must be a list`);
    return v;
  }

  hasAny(keys: readonly string[]): boolean {
    return keys.some((key) => !isAbsent(this.value[key]));
  }

  raw(key: string): unknown {
    return this.value[key];
  }
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && nullWords.has(value));
}

/** A path as client-go resolves it: absolute as is, relative against the kubeconfig's directory. */
function resolvePath(file: string, value: string | undefined): string | undefined {
  if (value === undefined || path.isAbsolute(value)) return value;
  return path.join(path.dirname(path.resolve(file)), value);
}

/**
 * Reads one kubeconfig file. Every scalar is read as a string first (YAML's failsafe schema):
 * a token of digits stays exactly as written, as it does in client-go.
 */
export function readKubeConfigFile(file: string): KubeConfigDocument {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = parse(text, { schema: 'failsafe', logLevel: 'error' });
  } catch (err) {
    throw new KubeConfigError(`kubeconfig ${file} is not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const top = Fields.of(parsed, `kubeconfig ${file}`);
  const doc: KubeConfigDocument = {
    file,
    clusters: new Map(),
    users: new Map(),
    contexts: new Map(),
    currentContext: top.string('current-context'),
  };
  for (const { name, body, where } of namedEntries(top, 'clusters', 'cluster', file)) {
    add(doc.clusters, name, where, {
      name,
      server: body.string('server'),
      certificateAuthority: resolvePath(file, body.string('certificate-authority')),
      certificateAuthorityData: body.string('certificate-authority-data'),
      insecureSkipTlsVerify: body.boolean('insecure-skip-tls-verify'),
      tlsServerName: body.string('tls-server-name'),
      needsClientNode: body.hasAny(clientNodeClusterFields),
    });
  }
  for (const { name, body, where } of namedEntries(top, 'users', 'user', file)) {
    add(doc.users, name, where, {
      name,
      token: body.string('token'),
      tokenFile: resolvePath(file, body.string('tokenFile')),
      clientCertificate: resolvePath(file, body.string('client-certificate')),
      clientCertificateData: body.string('client-certificate-data'),
      clientKey: resolvePath(file, body.string('client-key')),
      clientKeyData: body.string('client-key-data'),
      needsClientNode: body.hasAny(clientNodeUserFields),
    });
  }
  for (const { name, body, where } of namedEntries(top, 'contexts', 'context', file)) {
    add(doc.contexts, name, where, {
      name,
      cluster: body.string('cluster'),
      user: body.string('user'),
      namespace: body.string('namespace'),
    });
  }
  return doc;
}

/** The `name` + body entries of `clusters`, `users` or `contexts`. */
function namedEntries(top: Fields, listKey: string, bodyKey: string, file: string): { name: string; body: Fields; where: string }[] {
  return top.list(listKey).map((item, i) => {
    const entry = Fields.of(item, `kubeconfig ${file}: ${listKey}[${i}]`);
    const name = entry.string('name');
    if (!name) throw new KubeConfigError(`kubeconfig ${file}: ${listKey}[${i}] has no name`);
    const where = `${bodyKey} "${name}" in ${file}`;
    return { name, body: Fields.of(entry.raw(bodyKey), where), where };
  });
}

function add<T>(map: Map<string, T>, name: string, where: string, value: T): void {
  if (map.has(name)) throw new KubeConfigError(`${where}: defined twice in the same file`);
  map.set(name, value);
}
