// Reading kubeconfig files the way client-go does: several files merge with the first
// definition of each name winning, current-context comes from the first file that sets one,
// and relative paths are resolved against the directory of the file that holds them (so a
// kubeconfig can travel with its certificates). Fields the operator does not use are ignored,
// as client-go ignores unknown fields.
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
  proxyUrl?: string;
  disableCompression: boolean;
  /** `extensions[name=client.authentication.k8s.io/exec].extension`: handed to exec plugins as `spec.cluster.config`. */
  execExtension?: unknown;
}

export interface KubeConfigExec {
  command?: string;
  args: string[];
  env: { name: string; value: string }[];
  apiVersion?: string;
  installHint?: string;
  provideClusterInfo: boolean;
  interactiveMode?: string;
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
  username?: string;
  password?: string;
  /** `as`, `as-uid`, `as-groups`, `as-user-extra`. */
  impersonate?: string;
  impersonateUid?: string;
  impersonateGroups: string[];
  impersonateUserExtra: Record<string, string[]>;
  /** The name of a legacy `auth-provider` (never supported; kept to say so). */
  authProvider?: string;
  exec?: KubeConfigExec;
}

export interface KubeConfigContext {
  name: string;
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** One or several kubeconfig files, merged. */
export interface KubeConfigDocument {
  /** The files it was read from, in order. */
  files: string[];
  clusters: Map<string, KubeConfigCluster>;
  users: Map<string, KubeConfigUser>;
  contexts: Map<string, KubeConfigContext>;
  currentContext?: string;
}

/** `insecure-skip-tls-verify: yes` is a boolean to client-go's YAML 1.1 parser, so it is one here too. */
const trueWords = new Set(['true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'y', 'Y', 'on', 'On', 'ON']);
const falseWords = new Set(['false', 'False', 'FALSE', 'no', 'No', 'NO', 'n', 'N', 'off', 'Off', 'OFF']);
/** Scalars that mean "not set" (kubectl writes `users: null` for an empty list). */
const nullWords = new Set(['', '~', 'null', 'Null', 'NULL']);

/** Reads typed fields of one YAML mapping, naming the entry and field in every complaint. */
class Fields {
  constructor(private readonly value: Record<string, unknown>, private readonly where: string) {}

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

  strings(key: string): string[] {
    return this.list(key).map((item, i) => {
      if (typeof item !== 'string') throw new KubeConfigError(`${this.where}: ${key}[${i}] must be a string`);
      return item;
    });
  }

  mapping(key: string): Fields {
    return Fields.of(this.value[key], `${this.where}: ${key}`);
  }

  has(key: string): boolean {
    return !isAbsent(this.value[key]);
  }

  keys(): string[] {
    return Object.keys(this.value);
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
 * Parses one kubeconfig file's text. Every scalar is read as a string first (YAML's failsafe
 * schema): a token or password of digits stays exactly as written, as it does in client-go.
 */
function parseKubeConfig(text: string, file: string): KubeConfigDocument {
  let parsed: unknown;
  try {
    parsed = parse(text, { schema: 'failsafe', logLevel: 'error' });
  } catch (err) {
    throw new KubeConfigError(`kubeconfig ${file} is not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const top = Fields.of(parsed, `kubeconfig ${file}`);
  const doc: KubeConfigDocument = { files: [file], clusters: new Map(), users: new Map(), contexts: new Map(), currentContext: top.string('current-context') };

  for (const { name, body, where, index } of namedEntries(top, 'clusters', 'cluster', file)) {
    let execExtension: unknown;
    for (const [i, entry] of body.list('extensions').entries()) {
      const ext = Fields.of(entry, `${where}: extensions[${i}]`);
      if (ext.string('name') === execExtensionName) execExtension = typedValue(text, ['clusters', index, 'cluster', 'extensions', i, 'extension']);
    }
    add(doc.clusters, name, where, {
      name,
      server: body.string('server'),
      certificateAuthority: resolvePath(file, body.string('certificate-authority')),
      certificateAuthorityData: body.string('certificate-authority-data'),
      insecureSkipTlsVerify: body.boolean('insecure-skip-tls-verify'),
      tlsServerName: body.string('tls-server-name'),
      proxyUrl: body.string('proxy-url'),
      disableCompression: body.boolean('disable-compression'),
      execExtension,
    });
  }

  for (const { name, body, where } of namedEntries(top, 'users', 'user', file)) {
    const extra: Record<string, string[]> = {};
    const extraFields = body.mapping('as-user-extra');
    for (const key of extraFields.keys()) extra[key] = extraFields.strings(key);
    add(doc.users, name, where, {
      name,
      token: body.string('token'),
      tokenFile: resolvePath(file, body.string('tokenFile')),
      clientCertificate: resolvePath(file, body.string('client-certificate')),
      clientCertificateData: body.string('client-certificate-data'),
      clientKey: resolvePath(file, body.string('client-key')),
      clientKeyData: body.string('client-key-data'),
      username: body.string('username'),
      password: body.string('password'),
      impersonate: body.string('as'),
      impersonateUid: body.string('as-uid'),
      impersonateGroups: body.strings('as-groups'),
      impersonateUserExtra: extra,
      authProvider: body.has('auth-provider') ? (body.mapping('auth-provider').string('name') ?? '(unnamed)') : undefined,
      exec: body.has('exec') ? parseExec(body.mapping('exec'), file) : undefined,
    });
  }

  for (const { name, body, where } of namedEntries(top, 'contexts', 'context', file)) {
    add(doc.contexts, name, where, {
      name, cluster: body.string('cluster'), user: body.string('user'), namespace: body.string('namespace'),
    });
  }
  return doc;
}

function parseExec(exec: Fields, file: string): KubeConfigExec {
  const command = exec.string('command');
  return {
    // A command with a path separator is relative to the kubeconfig; a bare name is looked up in PATH.
    command: command?.includes('/') ? resolvePath(file, command) : command,
    args: exec.strings('args'),
    env: exec.list('env').map((item, i) => {
      const e = Fields.of(item, `${file}: exec env[${i}]`);
      return { name: e.string('name') ?? '', value: e.string('value') ?? '' };
    }),
    apiVersion: exec.string('apiVersion'),
    installHint: exec.string('installHint'),
    provideClusterInfo: exec.boolean('provideClusterInfo'),
    interactiveMode: exec.string('interactiveMode'),
  };
}

/** The `name` + body entries of `clusters`, `users` or `contexts`. */
function namedEntries(top: Fields, listKey: string, bodyKey: string, file: string): { name: string; body: Fields; where: string; index: number }[] {
  return top.list(listKey).map((item, i) => {
    const entry = Fields.of(item, `kubeconfig ${file}: ${listKey}[${i}]`);
    const name = entry.string('name');
    if (!name) throw new KubeConfigError(`kubeconfig ${file}: ${listKey}[${i}] has no name`);
    const where = `${bodyKey} "${name}" in ${file}`;
    return { name, body: Fields.of(entry.raw(bodyKey), where), where, index: i };
  });
}

/** The cluster extension exec plugins receive as `spec.cluster.config`. */
const execExtensionName = 'client.authentication.k8s.io/exec';

/** A value with YAML's usual types (numbers, booleans), for data handed on as JSON rather than read as fields. */
function typedValue(text: string, at: (string | number)[]): unknown {
  let value: unknown = parse(text, { logLevel: 'error' });
  for (const key of at) value = (value as Record<string | number, unknown> | undefined)?.[key];
  return value;
}

function add<T>(map: Map<string, T>, name: string, where: string, value: T): void {
  if (map.has(name)) throw new KubeConfigError(`${where}: defined twice in the same file`);
  map.set(name, value);
}

/** Merges files in order: the first file that defines a name (or sets current-context) wins. */
function mergeKubeConfigs(docs: readonly KubeConfigDocument[]): KubeConfigDocument {
  const merged: KubeConfigDocument = { files: [], clusters: new Map(), users: new Map(), contexts: new Map() };
  for (const doc of docs) {
    merged.files.push(...doc.files);
    merged.currentContext ??= doc.currentContext;
    for (const [kind, map] of [['clusters', doc.clusters], ['users', doc.users], ['contexts', doc.contexts]] as const) {
      const into = merged[kind] as Map<string, unknown>;
      for (const [name, value] of map) if (!into.has(name)) into.set(name, value);
    }
  }
  return merged;
}

/**
 * Reads and merges kubeconfig files. One file must exist; in a list (KUBECONFIG style), files
 * that do not exist are skipped, as client-go skips them, but at least one must.
 */
export function readKubeConfigFiles(files: readonly string[]): KubeConfigDocument {
  const docs: KubeConfigDocument[] = [];
  const missing: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && files.length > 1) {
        missing.push(file);
        continue;
      }
      throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
    }
    docs.push(parseKubeConfig(text, file));
  }
  if (docs.length === 0) throw new KubeConfigError(`none of the kubeconfig files exists: ${missing.join(', ')}`);
  return mergeKubeConfigs(docs);
}
