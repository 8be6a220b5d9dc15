// Kubeconfigs the lean reader leaves to @kubernetes/client-node: exec credential plugins, auth
// providers, basic auth, impersonation, proxy-url, and KUBECONFIG lists of several files.
// These are laptop cases; client-node costs about 75 MB of resident memory, so it is imported
// here, when such a kubeconfig is loaded, and a pod (in-cluster, or a token or certificate
// kubeconfig) never loads it. Around client-node: lists merge as kubectl merges them, exec
// plugins run as client-go runs them (command beside the kubeconfig, KUBERNETES_EXEC_INFO),
// and its errors become KubeConfigErrors.
import type http from 'node:http';
import type https from 'node:https';
import path from 'node:path';
import type { Cluster, Context, KubeConfig, User } from '@kubernetes/client-node';
import { unknownContext } from './kube-config-context.js';
import { KubeConfigError } from './kube-config-error.js';
import type { LoadedKubeConfig } from './kube-config.js';

export interface ClientNodeOptions {
  /** A context other than the current one. */
  context?: string;
  /** client-node waits for an exec plugin forever; a request gives up after this. */
  execTimeoutMs: number;
}

export async function loadWithClientNode(files: readonly string[], options: ClientNodeOptions): Promise<LoadedKubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const read = () => readMerged(files, () => new KubeConfig(), options.context);
  return new ClientNodeKubeConfig(read, read(), options.execTimeoutMs);
}

/**
 * The files merged as kubectl merges KUBECONFIG: the first definition of a name wins, and the
 * first current-context (client-node's `mergeConfig` throws on a repeated name and lets later
 * files win); files that do not exist are skipped when there are several.
 */
function readMerged(files: readonly string[], newConfig: () => KubeConfig, context: string | undefined): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let current: string | undefined;
  const found: string[] = [];
  for (const file of files) {
    const kc = newConfig();
    try {
      kc.loadFromFile(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && files.length > 1) continue;
      throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
    }
    found.push(file);
    current ||= kc.getCurrentContext();
    for (const c of kc.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of kc.getUsers()) if (!users.has(u.name)) users.set(u.name, asClientGoRunsExec(u, file));
    for (const c of kc.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
  }
  if (found.length === 0) throw new KubeConfigError(`none of the kubeconfig files exists: ${files.join(', ')}`);
  const name = context || current;
  if (!name) throw new KubeConfigError(`kubeconfig ${found.join(', ')} sets no current-context; choose one with --context`);
  const chosen = contexts.get(name);
  if (!chosen) throw unknownContext(name, found, [...contexts.keys()]);
  const missing = [
    clusters.has(chosen.cluster) ? '' : `cluster "${chosen.cluster}"`,
    !chosen.user || users.has(chosen.user) ? '' : `user "${chosen.user}"`,
  ].filter(Boolean);
  if (missing.length > 0) throw new KubeConfigError(`context "${name}" names ${missing.join(' and ')}, not defined in ${found.join(', ')}`);
  const merged = newConfig();
  merged.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext: name,
  });
  return merged;
}

/**
 * client-go runs a command with a path separator from the kubeconfig's directory and tells
 * every plugin, in KUBERNETES_EXEC_INFO, that it gets no terminal; client-node does neither.
 */
function asClientGoRunsExec(user: User, file: string): User {
  const exec = user.exec as { command?: string; apiVersion?: string; env?: { name: string; value: string }[] | null } | undefined;
  if (!exec) return user;
  const { command } = exec;
  const dir = path.dirname(path.resolve(file));
  const besideFile = typeof command === 'string' && command.includes('/') ? path.resolve(dir, command) : command;
  const info = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec: { interactive: false } });
  return { ...user, exec: { ...exec, command: besideFile, env: [...(exec.env ?? []), { name: 'KUBERNETES_EXEC_INFO', value: info }] } };
}

/** A kubeconfig client-node applies; read again after the API server rejects its credentials. */
class ClientNodeKubeConfig implements LoadedKubeConfig {
  /** Bumped when credentials are rejected; each applied options object remembers the one it was made in. */
  private generation = 0;
  private readonly generationOf = new WeakMap<https.RequestOptions, number>();
  private stale = false;
  private applying: Promise<{ applied: https.RequestOptions; generation: number }> | undefined;

  constructor(
    private readonly read: () => KubeConfig,
    private kc: KubeConfig,
    private readonly execTimeoutMs: number,
  ) {}

  getCurrentContext(): string {
    return this.kc.getCurrentContext();
  }

  get namespace(): string | undefined {
    return this.kc.getContextObject(this.kc.getCurrentContext())?.namespace;
  }

  getCurrentCluster(): { readonly name: string; readonly server: string; readonly proxyUrl?: string } {
    const { name, server, proxyUrl } = this.kc.getCurrentCluster()!;
    return { name, server, ...(proxyUrl ? { proxyUrl } : {}) };
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    // As the lean path and client-go: credentials go to TLS servers only.
    if (!this.getCurrentCluster().server.startsWith('https://')) return;
    // Concurrent requests share one run of an exec plugin (client-node would start one each).
    this.applying ??= this.applyFresh().finally(() => (this.applying = undefined));
    const { applied, generation } = await this.applying;
    const { agent: _ignored, headers, ...tls } = applied;
    Object.assign(options, tls);
    options.headers = { ...(options.headers as http.OutgoingHttpHeaders), ...(headers as http.OutgoingHttpHeaders) };
    this.generationOf.set(options, generation);
  }

  /** A 401 to credentials of the current generation: the next request reads the kubeconfig again, so an exec plugin runs again. */
  credentialsRejected(options: https.RequestOptions): void {
    if (this.generationOf.get(options) !== this.generation) return;
    this.generation++;
    this.stale = true;
  }

  proxyAgent(tls: https.AgentOptions): http.Agent {
    // Private in client-node's typings, yet the one place that picks the agent for the proxy's
    // scheme (hpagent, socks-proxy-agent); the agent applyToHTTPSOptions makes keeps no connection alive.
    return this.kc['createAgent'](this.kc.getCurrentCluster(), { ...tls, keepAlive: true });
  }

  private async applyFresh(): Promise<{ applied: https.RequestOptions; generation: number }> {
    const generation = this.generation;
    let timer: NodeJS.Timeout | undefined;
    try {
      if (this.stale) {
        this.kc = this.read();
        this.stale = false;
      }
      const applied: https.RequestOptions = { headers: {} };
      const late = () => new KubeConfigError(`${this.who()}: no credentials within ${this.execTimeoutMs} ms`, { transient: true });
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(late()), this.execTimeoutMs)));
      await Promise.race([this.kc.applyToHTTPSOptions(applied), timeout]);
      return { applied, generation };
    } catch (err) {
      throw this.credentialError(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private who(): string {
    const user = this.kc.getCurrentUser();
    return `user "${user?.name ?? ''}"${user?.exec ? ` (exec plugin ${user.exec.command})` : ''}`;
  }

  /** client-node's errors (a plugin's stderr, a spawn failure) as KubeConfigErrors; a failed plugin may succeed next time. */
  private credentialError(err: unknown): KubeConfigError {
    if (err instanceof KubeConfigError) return err;
    const { code, message } = err as NodeJS.ErrnoException;
    const hint = code === 'ENOENT' ? this.kc.getCurrentUser()?.exec?.installHint : undefined;
    const text = `${this.who()}: ${message.trim() || 'failed without saying why'}${hint ? `\n${String(hint).trim()}` : ''}`;
    return new KubeConfigError(text, { cause: err, transient: code !== 'ENOENT' });
  }
}
