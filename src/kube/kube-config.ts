// The operator's kubeconfig loader. In a pod (and with a token or client-certificate
// kubeconfig) it is this file and three small ones: a server URL, TLS material and a
// credential. client-node's KubeConfig pulls in the whole generated API (thousands of model
// classes), openid-client and proxy agents, about 75 MB of resident memory, so it is imported
// only for the laptop cases the lean reader leaves to it (kube-config-client-node.ts).
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type http from 'node:http';
import type https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { createSecureContext } from 'node:tls';
import { loadWithClientNode } from './kube-config-client-node.js';
import { resolveContext, type ResolvedContext } from './kube-config-context.js';
import { KubeConfigError } from './kube-config-error.js';
import { readKubeConfigFile } from './kube-config-file.js';
import { inClusterContext } from './kube-config-in-cluster.js';

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
  /** When the credentials applied to `options` expire (epoch ms), so they are not used after. */
  credentialsExpireAt?(options: https.RequestOptions): number | undefined;
  /** A keep-alive agent through the cluster's proxy-url, with these TLS options (for the API server, inside the tunnel). */
  proxyAgent?(tls: https.AgentOptions): http.Agent;
}

/** A loaded kubeconfig context. */
export interface LoadedKubeConfig extends KubeAccess {
  getCurrentContext(): string;
  getCurrentCluster(): { readonly name: string; readonly server: string; readonly proxyUrl?: string };
  /** The context's namespace, if it sets one. */
  readonly namespace: string | undefined;
}

/** Where to read credentials from; empty means: `KUBECONFIG`, else in-cluster, else `~/.kube/config`. */
export interface KubeConfigSource {
  /** A kubeconfig file, or several separated by `path.delimiter` as in `KUBECONFIG` (wins over everything else). */
  path?: string;
  /** A context other than the file's current one. */
  context?: string;
  /** The environment: `KUBECONFIG`, `KUBERNETES_SERVICE_HOST`/`_PORT` (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The pod's ServiceAccount folder (default `/var/run/secrets/kubernetes.io/serviceaccount`). */
  serviceAccountDir?: string;
  /** Where `~/.kube/config` is looked for (default the user's home). */
  homeDir?: string;
  /** An exec plugin that has not answered by then fails the request (default 60 s). */
  execTimeoutMs?: number;
}

/**
 * Loads credentials: an explicit path, then `KUBECONFIG`, then the pod's ServiceAccount, then
 * `~/.kube/config`. Throws `KubeConfigError` naming what is missing or wrong.
 */
export async function loadKubeConfig(source: KubeConfigSource = {}): Promise<LoadedKubeConfig> {
  const env = source.env ?? process.env;
  const files = (source.path || env.KUBECONFIG || '').split(path.delimiter).filter(Boolean);
  if (files.length > 0) return loadFiles(files, source);
  const inCluster = inClusterContext(env, source.serviceAccountDir);
  if (inCluster) {
    if (source.context) {
      const why = 'no kubeconfig file is in use (in a pod without KUBECONFIG, the ServiceAccount is used)';
      throw new KubeConfigError(`context "${source.context}" was asked for, but ${why}`);
    }
    return new LeanKubeConfig(inCluster);
  }
  const home = path.join(source.homeDir ?? os.homedir(), '.kube', 'config');
  if (!existsSync(home)) {
    const where = 'set KUBECONFIG, pass a kubeconfig path, run in a pod with a ServiceAccount, or create ~/.kube/config';
    throw new KubeConfigError(`no Kubernetes credentials: ${where}`);
  }
  return loadFiles([home], source);
}

/** One file whose context the lean reader handles stays lean; anything else goes to client-node. */
async function loadFiles(files: string[], source: KubeConfigSource): Promise<LoadedKubeConfig> {
  const lean = files.length === 1 ? resolveContext(readKubeConfigFile(files[0]!), source.context) : undefined;
  if (lean) return new LeanKubeConfig(lean);
  return loadWithClientNode(files, { context: source.context, execTimeoutMs: source.execTimeoutMs ?? 60_000 });
}

/** A token or client-certificate context. Files it names are read again whenever credentials are applied, so rotations are seen. */
class LeanKubeConfig implements LoadedKubeConfig {
  constructor(readonly context: ResolvedContext) {
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
      const problem = keyPairProblem(cert, user.clientKeyData ?? readFileSync(user.clientKeyFile!));
      if (problem) throw new KubeConfigError(where(`the ${problem}`));
    }
  }

  getCurrentContext(): string {
    return this.context.name;
  }

  get namespace(): string | undefined {
    return this.context.namespace;
  }

  getCurrentCluster(): { readonly name: string; readonly server: string } {
    const { name, server } = this.context.cluster;
    return { name, server };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const { cluster, user } = this.context;
    // As client-go: credentials go to TLS servers only (an http:// server is a local proxy such as `kubectl proxy`).
    if (!cluster.server.startsWith('https://')) return;
    if (cluster.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    const ca = await this.certificateAuthority();
    if (ca) options.ca = ca;
    if (cluster.tlsServerName) options.servername = cluster.tlsServerName;
    const cert = user.clientCertificateData ?? (await readNamed(user.clientCertificateFile, 'client-certificate'));
    const key = user.clientKeyData ?? (await readNamed(user.clientKeyFile, 'client-key'));
    if (cert && key) {
      options.cert = cert;
      options.key = key;
    }
    const headers = (options.headers ??= {}) as http.OutgoingHttpHeaders;
    const token = await this.bearerToken();
    if (token) headers.Authorization = `Bearer ${token}`;
  }

  /** The CA bundle to verify the API server with; undefined: the system's roots. */
  private async certificateAuthority(): Promise<Buffer | undefined> {
    const { cluster } = this.context;
    const ca = cluster.caData ?? (await readNamed(cluster.caFile, 'certificate-authority'));
    // node ignores a CA bundle without certificates; client-go refuses it, and so do we.
    if (ca && !ca.includes('-----BEGIN CERTIFICATE-----')) {
      const field = cluster.caData ? 'certificate-authority-data' : `certificate-authority ${cluster.caFile}`;
      throw new KubeConfigError(`cluster "${cluster.name}": ${field} holds no PEM certificate`);
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
        if (user.token) return user.token;
        if (err instanceof KubeConfigError) throw err;
        const why = (err as Error).message;
        throw new KubeConfigError(`user "${user.name}": cannot read tokenFile ${user.tokenFile}: ${why}`, { cause: err });
      }
    }
    return user.token;
  }
}

/** Why a client certificate and key cannot be used together (TLS refuses them), or undefined when they can. */
function keyPairProblem(cert: Buffer, key: Buffer): string | undefined {
  try {
    createSecureContext({ cert, key });
    return undefined;
  } catch (err) {
    return `client certificate and key are not a usable pair: ${(err as Error).message}`;
  }
}

/** The file's bytes; undefined when no file is named. */
async function readNamed(file: string | undefined, what: string): Promise<Buffer | undefined> {
  if (!file) return undefined;
  try {
    return await readFile(file);
  } catch (err) {
    throw new KubeConfigError(`cannot read ${what} ${file}: ${(err as Error).message}`, { cause: err });
  }
}
