// The operator's own kubeconfig loader. client-node's KubeConfig pulls in the whole generated
// API (thousands of model classes), openid-client and proxy agents: about 75 MB of resident
// memory (48 MB less for the run command without it) for what is, to the operator, a server
// URL, TLS material and a credential.
import { accessSync, constants, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import type https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { resolveContext, type ResolvedContext } from './kube-config-context.js';
import { KubeConfigError } from './kube-config-error.js';
import { readKubeConfigFiles } from './kube-config-file.js';
import { inClusterContext } from './kube-config-in-cluster.js';
import { ExecCredentialPlugin, keyPairProblem, type ExecClusterInfo, type ExecCredential } from './kube-exec-credential.js';

/**
 * What the client needs from a kubeconfig. client-node's `KubeConfig` satisfies it too
 * (tests hand theirs to `KubeClient`).
 */
export interface KubeAccess {
  getCurrentCluster(): { readonly server: string; readonly proxyUrl?: string } | null;
  /** Sets TLS options (ca, cert, key, rejectUnauthorized, servername) and credentials (headers, auth) on `options`. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
  /** The API server answered 401 to a request made with `options`: credentials from an exec plugin are fetched again. */
  credentialsRejected?(options: https.RequestOptions): void;
  /** When the credentials applied to `options` expire (epoch ms; an exec plugin's), so they are not used after. */
  credentialsExpireAt?(options: https.RequestOptions): number | undefined;
}

/** Where to read credentials from; empty means: `KUBECONFIG`, else in-cluster, else `~/.kube/config`. */
export interface KubeConfigSource {
  /** A kubeconfig file, or several separated by `path.delimiter` as in `KUBECONFIG` (wins over everything else). */
  path?: string;
  /** A context other than the file's current one. */
  context?: string;
  /** The environment: `KUBECONFIG`, `KUBERNETES_SERVICE_HOST`/`_PORT`, and what exec plugins inherit (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The pod's ServiceAccount folder (default `/var/run/secrets/kubernetes.io/serviceaccount`). */
  serviceAccountDir?: string;
  /** Where `~/.kube/config` is looked for (default the user's home). */
  homeDir?: string;
  /** An exec plugin that has not answered by then is killed and the request fails (default 60 s). */
  execTimeoutMs?: number;
}

/**
 * Loads credentials: an explicit path, then `KUBECONFIG`, then the pod's ServiceAccount, then
 * `~/.kube/config`. Throws `KubeConfigError` naming what is missing or wrong.
 */
export function loadKubeConfig(source: KubeConfigSource = {}): LoadedKubeConfig {
  const env = source.env ?? process.env;
  const options = { env, execTimeoutMs: source.execTimeoutMs ?? 60_000 };
  const files = source.path || env.KUBECONFIG;
  if (files) {
    const list = files.split(path.delimiter).filter(Boolean);
    return new LoadedKubeConfig(resolveContext(readKubeConfigFiles(list), source.context), options);
  }
  const inCluster = inClusterContext(env, source.serviceAccountDir);
  if (inCluster) {
    if (source.context) throw new KubeConfigError(`context "${source.context}" was asked for, but no kubeconfig file is in use (in a pod without KUBECONFIG, the ServiceAccount is used)`);
    return new LoadedKubeConfig(inCluster, options);
  }
  const home = path.join(source.homeDir ?? os.homedir(), '.kube', 'config');
  let homeConfig;
  try {
    homeConfig = readKubeConfigFiles([home]);
  } catch (err) {
    if ((err as { cause?: NodeJS.ErrnoException }).cause?.code !== 'ENOENT') throw err;
    throw new KubeConfigError('no Kubernetes credentials: set KUBECONFIG, pass a kubeconfig path, run in a pod with a ServiceAccount, or create ~/.kube/config');
  }
  return new LoadedKubeConfig(resolveContext(homeConfig, source.context), options);
}

/** A loaded kubeconfig context. Files it names are read again whenever credentials are applied, so rotations are seen. */
export class LoadedKubeConfig implements KubeAccess {
  private readonly exec: ExecCredentialPlugin | undefined;
  /** Which plugin credential each applied options object carries, to tell a stale 401 from a fresh one. */
  private readonly execCredentialOf = new WeakMap<https.RequestOptions, ExecCredential>();

  constructor(readonly context: ResolvedContext, options: { env: Readonly<Record<string, string | undefined>>; execTimeoutMs: number }) {
    const { cluster, user } = context;
    const where = (what: string) => `user "${user.name}": ${what}`;
    // Fail at start for unreadable files, as client-go does, rather than at the first request.
    for (const [file, what] of [
      [cluster.caFile, `cluster "${cluster.name}": certificate-authority`],
      [user.clientCertificateFile, where('client-certificate')],
      [user.clientKeyFile, where('client-key')],
      [user.token ? undefined : user.tokenFile, where('tokenFile')],
    ] as const) {
      if (!file) continue;
      try {
        accessSync(file, constants.R_OK);
      } catch (err) {
        throw new KubeConfigError(`${what} ${file} cannot be read: ${(err as Error).message}`, { cause: err });
      }
    }
    if ((user.clientCertificateFile || user.clientCertificateData) && (user.clientKeyFile || user.clientKeyData)) {
      const cert = user.clientCertificateData ?? readFileSync(user.clientCertificateFile!);
      const key = user.clientKeyData ?? readFileSync(user.clientKeyFile!);
      const problem = keyPairProblem(cert, key);
      if (problem) throw new KubeConfigError(where(`the ${problem}`));
    }
    this.exec = user.exec
      ? new ExecCredentialPlugin(user.exec, {
        user: user.name, env: options.env, timeoutMs: options.execTimeoutMs,
        ...(user.exec.provideClusterInfo ? { cluster: () => this.execClusterInfo() } : {}),
      })
      : undefined;
  }

  getCurrentContext(): string {
    return this.context.name;
  }

  /** The context's namespace, if it sets one. */
  get namespace(): string | undefined {
    return this.context.namespace;
  }

  getCurrentCluster(): { readonly name: string; readonly server: string; readonly proxyUrl?: string } {
    const { name, server, proxyUrl } = this.context.cluster;
    return { name, server, ...(proxyUrl ? { proxyUrl } : {}) };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const { cluster, user } = this.context;
    // As client-go: credentials go to TLS servers only (an http:// server is a local proxy such as `kubectl proxy`).
    if (!cluster.server.startsWith('https://')) return;
    const headers = (options.headers ??= {}) as http.OutgoingHttpHeaders;
    if (cluster.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    const ca = await this.certificateAuthority();
    if (ca) options.ca = ca;
    if (cluster.tlsServerName) options.servername = cluster.tlsServerName;

    const cert = user.clientCertificateData ?? (user.clientCertificateFile ? await readNamed(user.clientCertificateFile, 'client-certificate') : undefined);
    const key = user.clientKeyData ?? (user.clientKeyFile ? await readNamed(user.clientKeyFile, 'client-key') : undefined);
    if (cert && key) {
      options.cert = cert;
      options.key = key;
    }
    const token = await this.bearerToken();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (user.basic) options.auth = `${user.basic.username}:${user.basic.password}`;
    // As client-go: the plugin runs only for a user with no credential of its own.
    if (this.exec && !token && !user.basic && !cert) {
      const credential = await this.exec.credential();
      if (credential.token) headers.Authorization = `Bearer ${credential.token}`;
      if (credential.clientCertificateData && credential.clientKeyData) {
        options.cert = credential.clientCertificateData;
        options.key = credential.clientKeyData;
      }
      this.execCredentialOf.set(options, credential);
    }
    const as = user.impersonation;
    if (as) {
      headers['Impersonate-User'] = as.user;
      if (as.uid) headers['Impersonate-Uid'] = as.uid;
      if (as.groups.length > 0) headers['Impersonate-Group'] = as.groups;
      for (const [k, values] of Object.entries(as.extra)) headers[`Impersonate-Extra-${encodeURIComponent(k)}`] = values;
    }
  }

  credentialsExpireAt(options: https.RequestOptions): number | undefined {
    return this.execCredentialOf.get(options)?.expiresAt;
  }

  credentialsRejected(options: https.RequestOptions): void {
    const credential = this.execCredentialOf.get(options);
    if (credential) this.exec?.rejected(credential);
  }

  /** The CA bundle to verify the API server with; undefined: the system's roots. */
  private async certificateAuthority(): Promise<Buffer | undefined> {
    const { cluster } = this.context;
    const ca = cluster.caData ?? (cluster.caFile ? await readNamed(cluster.caFile, 'certificate-authority') : undefined);
    // node ignores a CA bundle without certificates; client-go refuses it, and so do we.
    if (ca && !ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new KubeConfigError(`cluster "${cluster.name}": certificate-authority${cluster.caData ? '-data' : ` ${cluster.caFile}`} holds no PEM certificate`);
    }
    return ca;
  }

  /** The file's token while it can be read (bound tokens rotate), else the inline token. */
  private async bearerToken(): Promise<string | undefined> {
    const { user } = this.context;
    if (user.tokenFile) {
      try {
        const token = (await readFile(user.tokenFile, 'utf8')).trim();
        if (token) return token;
        if (!user.token) throw new KubeConfigError(`user "${user.name}": tokenFile ${user.tokenFile} is empty`);
      } catch (err) {
        if (!user.token) throw err instanceof KubeConfigError ? err : new KubeConfigError(`user "${user.name}": cannot read tokenFile ${user.tokenFile}: ${(err as Error).message}`, { cause: err });
      }
    }
    return user.token;
  }

  private async execClusterInfo(): Promise<ExecClusterInfo> {
    const { cluster } = this.context;
    const ca = await this.certificateAuthority();
    return {
      server: cluster.server,
      ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
      ...(cluster.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
      ...(ca ? { 'certificate-authority-data': ca.toString('base64') } : {}),
      ...(cluster.proxyUrl ? { 'proxy-url': cluster.proxyUrl } : {}),
      ...(cluster.disableCompression ? { 'disable-compression': true } : {}),
      ...(cluster.execExtension !== undefined ? { config: cluster.execExtension } : {}),
    };
  }
}

async function readNamed(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new KubeConfigError(`cannot read ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}
